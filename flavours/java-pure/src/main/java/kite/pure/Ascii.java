package kite.pure;

import java.nio.ByteBuffer;

/** ASCII helpers over buffers: compare, parse and copy without Strings. */
public final class Ascii {
    private Ascii() {}

    /** Digits only, at most 18; `invalid` otherwise. */
    public static long parseLong(ByteBuffer b, int at, int length, long invalid) {
        if (length <= 0 || length > 18) return invalid;
        long v = 0;
        for (int i = at, end = at + length; i < end; i++) {
            final byte c = b.get(i);
            if (c < '0' || c > '9') return invalid;
            v = v * 10 + (c - '0');
        }
        return v;
    }

    public static boolean equals(ByteBuffer b, int at, int length, byte[] s, int sLength) {
        if (length != sLength) return false;
        for (int i = 0; i < length; i++) if (b.get(at + i) != s[i]) return false;
        return true;
    }

    /** The bytes of an ASCII literal (set-up only). */
    public static byte[] bytes(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    }

    /** Decimal digits of v (v >= 0). */
    public static int digits(long v) {
        int n = 1;
        while (v >= 10) {
            v /= 10;
            n++;
        }
        return n;
    }

    /** A String of the bytes (diagnostics and tests only: allocates). */
    public static String string(ByteBuffer b, int at, int length) {
        final byte[] out = new byte[Math.max(0, length)];
        for (int i = 0; i < out.length; i++) out[i] = b.get(at + i);
        return new String(out, java.nio.charset.StandardCharsets.US_ASCII);
    }
}
