package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The shared frame vectors (tests/vectors/frames.txt), which every codec's tests read. */
class FrameVectorsTest {
    private record Vector(String name, String frame, String expect, int size, String fields) {}

    private static List<Vector> vectors() throws IOException {
        final String path = System.getProperty("kite.frame.vectors");
        assertTrue(path != null, "the test runs with -Dkite.frame.vectors=<tests/vectors/frames.txt>");
        final List<Vector> out = new ArrayList<>();
        for (String block : Files.readString(Path.of(path)).split("\n\n")) {
            String name = null, frame = null, expect = null, fields = "";
            int size = 0;
            for (String line : block.split("\n")) {
                if (line.isEmpty() || line.startsWith("#")) continue;
                final int colon = line.indexOf(": ");
                assertTrue(colon > 0, "not `key: value`: " + line);
                final String key = line.substring(0, colon), value = line.substring(colon + 2);
                switch (key) {
                    case "name" -> name = value;
                    case "frame" -> frame = value.replace('|', '\u0001');
                    case "expect" -> expect = value;
                    case "size" -> size = Integer.parseInt(value);
                    case "fields" -> fields = value;
                    default -> throw new AssertionError("unknown key " + key);
                }
            }
            if (name != null) out.add(new Vector(name, frame, expect, size, fields));
        }
        assertTrue(out.size() >= 8, "only " + out.size() + " vectors read");
        return out;
    }

    private static String bodyFields(FieldIndex ix, ByteBuffer b) {
        final StringBuilder s = new StringBuilder();
        for (int i = 0; i < ix.count(); i++) {
            if (i > 0) s.append('|');
            s.append(ix.tagAt(i)).append('=').append(Ascii.string(b, ix.offsetAt(i), ix.lengthAt(i)));
        }
        return s.toString();
    }

    @Test
    void framerAndIndexAgreeWithEveryVector() throws IOException {
        final Framer framer = new Framer();
        final FieldIndex ix = new FieldIndex();
        for (Vector v : vectors()) {
            final ByteBuffer b = Fix.buffer(v.frame());
            final Framer.Status status = framer.frame(b, 0, b.capacity());
            if (v.expect().equals("bad-checksum")) {
                assertEquals(Framer.Status.BAD_CHECKSUM, status, v.name());
                assertEquals(v.size(), framer.size(), v.name());
                continue;
            }
            assertEquals(Framer.Status.COMPLETE, status, v.name());
            assertEquals(v.size(), framer.size(), v.name());
            // The body: MsgType to the SOH before CheckSum's "10=".
            final int body = framer.bodyStart(), bodySize = framer.size() - 7 - body;
            if (v.expect().equals("bad-field")) {
                assertFalse(ix.build(b, body, bodySize), v.name());
                continue;
            }
            assertEquals("complete", v.expect(), v.name());
            assertTrue(ix.build(b, body, bodySize), v.name());
            assertEquals(v.fields(), bodyFields(ix, b), v.name());
        }
    }

    @Test
    void everyStrictPrefixOfAVectorIsIncomplete() throws IOException {
        final Framer framer = new Framer();
        for (Vector v : vectors()) {
            final ByteBuffer b = Fix.buffer(v.frame());
            for (int n = 0; n < v.size(); n++)
                assertEquals(Framer.Status.INCOMPLETE, framer.frame(b, 0, n), v.name() + " cut at " + n);
        }
    }
}
