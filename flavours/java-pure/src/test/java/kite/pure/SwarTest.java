package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SwarTest {
    private static ByteBuffer random(Random r, int n, int sohOneIn) {
        final ByteBuffer b = ByteBuffer.allocateDirect(n).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < n; i++) b.put(i, r.nextInt(sohOneIn) == 0 ? 1 : (byte) r.nextInt(256));
        return b;
    }

    @Test
    void sohScanMatchesItsScalarTwinOnRandomInput() {
        final Random r = new Random(20);
        for (int round = 0; round < 2000; round++) {
            final int n = 1 + r.nextInt(300);
            final ByteBuffer b = random(r, n, 1 + r.nextInt(64));
            final int from = r.nextInt(n);
            final int to = from + r.nextInt(n - from + 1);
            assertEquals(Swar.indexOfSohScalar(b, from, to), Swar.indexOfSoh(b, from, to), "round " + round);
        }
    }

    @Test
    void sohScanFindsTheFirstOfAdjacentSohsAndHighBytes() {
        final ByteBuffer b = ByteBuffer.allocateDirect(16).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 16; i++) b.put(i, (byte) 0x81);  // 0x81 ^ 0x01 = 0x80: no false match
        assertEquals(-1, Swar.indexOfSoh(b, 0, 16));
        b.put(5, (byte) 1);
        b.put(6, (byte) 1);
        assertEquals(5, Swar.indexOfSoh(b, 0, 16));
        b.put(4, (byte) 0);  // a zero byte before: borrows run upwards only
        assertEquals(5, Swar.indexOfSoh(b, 0, 16));
    }

    @Test
    void checksumMatchesItsScalarTwinOnRandomInputIncludingLongRuns() {
        final Random r = new Random(44);
        for (int round = 0; round < 500; round++) {
            final int n = 1 + r.nextInt(round < 10 ? 5000 : 400);
            final ByteBuffer b = random(r, n, 50);
            final int from = r.nextInt(n);
            assertEquals(Swar.checksumScalar(b, from, n), Swar.checksum(b, from, n), "round " + round);
        }
        final ByteBuffer ff = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 4096; i++) ff.put(i, (byte) 0xFF);  // the lanes' worst case
        assertEquals(Swar.checksumScalar(ff, 0, 4096), Swar.checksum(ff, 0, 4096));
    }
}
