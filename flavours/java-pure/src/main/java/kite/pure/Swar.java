package kite.pure;

import java.nio.ByteBuffer;

/**
 * Word-at-a-time scans over a little-endian direct buffer, each with a plain
 * scalar twin that a test holds to the same answers.
 */
public final class Swar {
    static final long ONES = 0x0101010101010101L;
    static final long HIGHS = 0x8080808080808080L;
    static final long LOW_BYTES = 0x00FF00FF00FF00FFL;

    private Swar() {}

    /** Index of the first SOH (0x01) in [from, to), or -1. The buffer's byte order must be LITTLE_ENDIAN. */
    public static int indexOfSoh(ByteBuffer b, int from, int to) {
        int i = from;
        for (; i + 8 <= to; i += 8) {
            // A zero byte of x is a SOH; the lowest flagged byte is exact (borrows only run upwards).
            final long x = b.getLong(i) ^ ONES;
            final long t = (x - ONES) & ~x & HIGHS;
            if (t != 0) return i + (Long.numberOfTrailingZeros(t) >>> 3);
        }
        for (; i < to; i++) if (b.get(i) == 1) return i;
        return -1;
    }

    public static int indexOfSohScalar(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) if (b.get(i) == 1) return i;
        return -1;
    }

    /** The FIX CheckSum of [from, to): the byte sum modulo 256. */
    public static int checksum(ByteBuffer b, int from, int to) {
        long lanes = 0;  // four 16-bit lane sums
        int i = from;
        int words = 0;
        for (; i + 8 <= to; i += 8) {
            final long w = b.getLong(i);
            lanes += (w & LOW_BYTES) + ((w >>> 8) & LOW_BYTES);
            // Each word adds at most 510 to a lane: fold before 65535 is reached.
            if (++words == 128) {
                lanes = fold(lanes);
                words = 0;
            }
        }
        int total = lanesTotal(lanes);
        for (; i < to; i++) total += b.get(i) & 0xFF;
        return total & 0xFF;
    }

    // Lane sums modulo 256 are all that matter: keep each lane's low byte.
    private static long fold(long lanes) {
        return lanes & LOW_BYTES;
    }

    private static int lanesTotal(long lanes) {
        return (int) ((lanes & 0xFFFF) + ((lanes >>> 16) & 0xFFFF) + ((lanes >>> 32) & 0xFFFF) + ((lanes >>> 48) & 0xFFFF));
    }

    public static int checksumScalar(ByteBuffer b, int from, int to) {
        int sum = 0;
        for (int i = from; i < to; i++) sum += b.get(i) & 0xFF;
        return sum & 0xFF;
    }
}
