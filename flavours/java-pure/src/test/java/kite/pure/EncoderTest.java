package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import org.junit.jupiter.api.Test;

class EncoderTest {
    private final ByteBuffer buf = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    private final Encoder enc = new Encoder(Ascii.bytes("KITE"));
    private final Framer framer = new Framer();

    EncoderTest() {
        enc.target(Ascii.bytes("BENCH3"), 6);
    }

    private String finish() {
        final int n = enc.finish();
        assertTrue(n > 0);
        assertEquals(Framer.Status.COMPLETE, framer.frame(buf, 0, n), "the framer accepts what the encoder writes");
        assertEquals(n, framer.size());
        return Fix.text(buf, 0, n);
    }

    @Test
    void writesTheHeaderInOrderAndFieldsAsTyped() {
        final long ms = Instant.parse("2026-12-01T17:05:09.042Z").toEpochMilli();
        enc.begin(buf, 0, buf.capacity(), (byte) '8', 12, ms)
           .putLong(Tag.OrderID, 1764608709042000L).putChar(Tag.ExecType, '0')
           .putDecimal(Tag.Price, 10125, -2).putDecimal(44, 5, -3).putDecimal(44, -7, 0).putTimestamp(Tag.TransactTime, ms);
        final String m = finish();
        assertTrue(m.startsWith("8=FIX.4.4|9="), m);
        assertTrue(m.contains("|35=8|49=KITE|56=BENCH3|34=12|52=20261201-17:05:09.042|37=1764608709042000|150=0|"
                              + "44=101.25|44=0.005|44=-7|60=20261201-17:05:09.042|10="), m);
    }

    @Test
    void bodyLengthIsRightWhenItsDigitCountChangesBetweenMessages() {
        final int[] sizes = {5, 400, 30, 2000, 1, 90};
        final byte[] filler = new byte[2000];
        java.util.Arrays.fill(filler, (byte) 'x');
        for (int size : sizes) {
            enc.begin(buf, 0, buf.capacity(), (byte) '0', 1, 0).putAscii(Tag.Text, java.util.Arrays.copyOf(filler, size));
            final String m = finish();
            final int body = m.indexOf("|10=") + 1 - (m.indexOf('|', 10) + 1);
            assertTrue(m.startsWith("8=FIX.4.4|9=" + body + "|35=0|"), m.substring(0, 20));
        }
    }

    @Test
    void timestampsMatchJavaTimeAcrossDaysYearsAndLeapDays() {
        final DateTimeFormatter f = DateTimeFormatter.ofPattern("yyyyMMdd-HH:mm:ss.SSS").withZone(ZoneOffset.UTC);
        final java.util.Random r = new java.util.Random(60);
        final long[] fixed = {0, 951782400000L, 951868799999L, 4107542399999L, 1709164800123L};
        for (int i = 0; i < 2000; i++) {
            final long ms = i < fixed.length ? fixed[i] : (long) (r.nextDouble() * 4_102_444_800_000L);
            enc.begin(buf, 0, buf.capacity(), (byte) '0', 1, ms);
            final String m = finish();
            assertTrue(m.contains("|52=" + f.format(Instant.ofEpochMilli(ms)) + "|"), ms + ": " + m);
        }
    }

    @Test
    void aMessageThatDoesNotFitFinishesAsZero() {
        enc.begin(buf, 0, 60, (byte) '0', 1, 0).putAscii(Tag.Text, new byte[100]);
        assertEquals(0, enc.finish());
    }
}
