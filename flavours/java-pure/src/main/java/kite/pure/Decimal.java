package kite.pure;

import java.nio.ByteBuffer;

/** A fixed-point decimal, mantissa x 10^exponent (exponent <= 0), read in place: never a double. */
public final class Decimal {
    public long mantissa;
    public int exponent;

    public Decimal set(long m, int e) {
        mantissa = m;
        exponent = e;
        return this;
    }

    /** Parses [-]digits[.digits] (at most 18 digits); false on anything else. */
    public boolean parse(ByteBuffer b, int at, int length) {
        if (length <= 0) return false;
        int p = at;
        final int end = at + length;
        final boolean negative = b.get(p) == '-';
        if (negative) p++;
        long m = 0;
        int e = 0;
        int digits = 0;
        boolean point = false;
        for (; p < end; p++) {
            final byte c = b.get(p);
            if (c == '.') {
                if (point) return false;
                point = true;
                continue;
            }
            if (c < '0' || c > '9' || ++digits > 18) return false;
            m = m * 10 + (c - '0');
            if (point) e--;
        }
        if (digits == 0) return false;
        mantissa = negative ? -m : m;
        exponent = e;
        return true;
    }
}
