package kite;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Runs an Application's onMessage on a given message, on the calling
 * thread, through the same Java path an engine thread takes (Dispatcher,
 * Message, Reply): so that the JIT compiles it before traffic arrives. The
 * Session passed has no native session behind it (id "", not logged on):
 * an application that sends from onMessage through it must not be warmed
 * this way. The reply is written and discarded.
 */
public final class Warmup {
    private Warmup() {}

    /**
     * @param fix the message as on the wire (8, 9 and 35 first: Message's
     *            isType reads the third field), fields separated by SOH or
     *            '|'; BodyLength and CheckSum are not checked
     * @return the last reply's body length (0 when there was none)
     */
    public static int run(Application app, String fix, int times) {
        final byte[] bytes = fix.replace('|', '\u0001').getBytes(StandardCharsets.US_ASCII);
        final ByteBuffer frame = ByteBuffer.allocateDirect(Math.max(bytes.length, 1));
        frame.put(0, bytes);
        final ByteBuffer fields = ByteBuffer.allocateDirect(12 * 1024);
        final ByteBuffer reply = ByteBuffer.allocateDirect(Reply.BODY + 64 * 1024);
        final Bridge bridge = new Bridge(app);
        final Dispatcher d = new Dispatcher(bridge, Thread.currentThread().getName(), frame, fields, reply);
        // The field index the engine would hand over: tag, value offset, value length.
        final java.nio.ByteBuffer ix = fields.order(java.nio.ByteOrder.nativeOrder());
        int count = 0, p = 0;
        while (p < bytes.length && count < 1024) {
            int eq = p;
            while (eq < bytes.length && bytes[eq] != '=') ++eq;
            int end = eq;
            while (end < bytes.length && bytes[end] != 1) ++end;
            if (eq >= bytes.length) break;
            ix.putInt(count * 12, Integer.parseInt(new String(bytes, p, eq - p, StandardCharsets.US_ASCII)));
            ix.putInt(count * 12 + 4, eq + 1);
            ix.putInt(count * 12 + 8, end - eq - 1);
            ++count;
            p = end + 1;
        }
        int last = 0;
        for (int i = 0; i < times; ++i) {
            if (d.onMessage(0, 0, bytes.length, count, i + 1, System.currentTimeMillis() * 1_000_000L) == Reply.SEND)
                last = reply.getInt(0);
        }
        if (bridge.errors() != 0) throw new IllegalStateException("warm-up: the application threw");
        return last;
    }
}
