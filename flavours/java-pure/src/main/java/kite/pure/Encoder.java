package kite.pure;

import java.nio.ByteBuffer;

/**
 * Writes a FIX message in place into a buffer it is handed:
 * 8=BeginString|9=N|35=T|49=Sender|56=Target|34=Seq|52=SendingTime| then the
 * body fields from typed calls; finish() fills BodyLength and the CheckSum.
 * BodyLength's digits are reserved from the previous message's count, so the
 * body moves only when that count changes. SendingTime's date and seconds
 * are rendered once per second. Nothing allocates after construction.
 */
public final class Encoder {
    private static final byte SOH = 1;
    private static final byte[] BEGIN = Ascii.bytes("8=FIX.4.4\u00019=");

    private final byte[] fixed = new byte[96];  // "49=S|56=T|"
    private int fixedLength;
    private final byte[] senderField;
    private final byte[] second = new byte[17];  // "YYYYMMDD-HH:MM:SS"
    private long secondCached = Long.MIN_VALUE;

    private ByteBuffer buf;
    private int start, p, limit, bodyStart, lengthAt;
    private int lengthDigits = 3;
    private boolean ok;

    public Encoder(byte[] senderCompId) {
        senderField = new byte[senderCompId.length + 4];
        senderField[0] = '4';
        senderField[1] = '9';
        senderField[2] = '=';
        System.arraycopy(senderCompId, 0, senderField, 3, senderCompId.length);
        senderField[senderField.length - 1] = SOH;
        target(new byte[0], 0);
    }

    /** Sets TargetCompID from bytes (set-up, or once per Logon). */
    public void target(byte[] s, int length) {
        int n = 0;
        System.arraycopy(senderField, 0, fixed, 0, senderField.length);
        n += senderField.length;
        fixed[n++] = '5';
        fixed[n++] = '6';
        fixed[n++] = '=';
        System.arraycopy(s, 0, fixed, n, Math.min(length, fixed.length - n - 1));
        n += Math.min(length, fixed.length - n - 1);
        fixed[n++] = SOH;
        fixedLength = n;
    }

    /** Sets TargetCompID from a buffer range (a Logon's SenderCompID): no allocation. */
    public void target(ByteBuffer b, int at, int length) {
        int n = senderField.length;
        System.arraycopy(senderField, 0, fixed, 0, n);
        fixed[n++] = '5';
        fixed[n++] = '6';
        fixed[n++] = '=';
        final int copy = Math.min(length, fixed.length - n - 1);
        for (int i = 0; i < copy; i++) fixed[n++] = b.get(at + i);
        fixed[n++] = SOH;
        fixedLength = n;
    }

    /** Starts a message at buf[at], writing no further than limit. */
    public Encoder begin(ByteBuffer b, int at, int lim, byte msgType, long seq, long nowMs) {
        beginHeader(b, at, lim);
        putTag(Tag.MsgType);
        put(msgType);
        put(SOH);
        endHeader(seq, nowMs);
        return this;
    }

    /** As begin, with a MsgType of several characters. */
    public Encoder begin(ByteBuffer b, int at, int lim, byte[] msgType, long seq, long nowMs) {
        beginHeader(b, at, lim);
        putTag(Tag.MsgType);
        put(msgType, msgType.length);
        put(SOH);
        endHeader(seq, nowMs);
        return this;
    }

    private void beginHeader(ByteBuffer b, int at, int lim) {
        buf = b;
        start = at;
        p = at;
        limit = lim;
        ok = true;
        put(BEGIN, BEGIN.length);
        lengthAt = p;
        p += lengthDigits;
        put(SOH);
        bodyStart = p;
    }

    private void endHeader(long seq, long nowMs) {
        put(fixed, fixedLength);
        putLong(Tag.MsgSeqNum, seq);
        putTimestamp(Tag.SendingTime, nowMs);
    }

    public Encoder putLong(int tag, long v) {
        putTag(tag);
        putDigits(v);
        put(SOH);
        return this;
    }

    public Encoder putChar(int tag, char c) {
        putTag(tag);
        put((byte) c);
        put(SOH);
        return this;
    }

    public Encoder putAscii(int tag, byte[] s) {
        putTag(tag);
        put(s, s.length);
        put(SOH);
        return this;
    }

    /** Text made of two literals and two numbers: a1 n1 a2 n2. */
    public Encoder putText(int tag, byte[] a1, long n1, byte[] a2, long n2) {
        putTag(tag);
        put(a1, a1.length);
        putDigits(n1);
        put(a2, a2.length);
        putDigits(n2);
        put(SOH);
        return this;
    }

    /** A value copied from a buffer range (an echoed field). */
    public Encoder putBytes(int tag, ByteBuffer src, int at, int length) {
        putTag(tag);
        if (room(length)) {
            buf.put(p, src, at, length);
            p += length;
        }
        put(SOH);
        return this;
    }

    /** mantissa x 10^exponent, exponent <= 0, written with -exponent decimals. */
    public Encoder putDecimal(int tag, long mantissa, int exponent) {
        putTag(tag);
        if (mantissa < 0) {
            put((byte) '-');
            mantissa = -mantissa;
        }
        if (exponent >= 0) {
            putDigits(mantissa);
            for (int i = 0; i < exponent; i++) put((byte) '0');
        } else {
            final int decimals = -exponent;
            final int digits = Math.max(Ascii.digits(mantissa), decimals + 1);
            if (room(digits + 1)) {
                int q = p + digits;  // the point sits before the last `decimals` digits
                for (int i = 0; i < digits; i++) {
                    if (i == decimals) buf.put(q--, (byte) '.');
                    buf.put(q--, (byte) ('0' + mantissa % 10));
                    mantissa /= 10;
                }
                p += digits + 1;
            }
        }
        put(SOH);
        return this;
    }

    /** UTCTimestamp with milliseconds: YYYYMMDD-HH:MM:SS.sss. */
    public Encoder putTimestamp(int tag, long epochMs) {
        putTag(tag);
        final long sec = Math.floorDiv(epochMs, 1000);
        if (sec != secondCached) renderSecond(sec);
        put(second, second.length);
        final int ms = Math.floorMod(epochMs, 1000);
        put((byte) '.');
        put((byte) ('0' + ms / 100));
        put((byte) ('0' + ms / 10 % 10));
        put((byte) ('0' + ms % 10));
        put(SOH);
        return this;
    }

    /** Fills BodyLength and CheckSum; returns the message's size, or 0 when it did not fit. */
    public int finish() {
        if (!ok) return 0;
        final int bodyLength = p - bodyStart;
        final int digits = Ascii.digits(bodyLength);
        if (digits != lengthDigits) {
            final int shift = digits - lengthDigits;
            if (p + shift + 7 > limit) return 0;
            if (shift > 0) {
                for (int i = p - 1; i >= bodyStart; i--) buf.put(i + shift, buf.get(i));
            } else {
                for (int i = bodyStart; i < p; i++) buf.put(i + shift, buf.get(i));
            }
            p += shift;
            bodyStart += shift;
            lengthDigits = digits;
            buf.put(lengthAt + digits, SOH);
        }
        int v = bodyLength;
        for (int i = lengthAt + digits - 1; i >= lengthAt; i--) {
            buf.put(i, (byte) ('0' + v % 10));
            v /= 10;
        }
        if (!room(7)) return 0;
        final int sum = Swar.checksum(buf, start, p);
        buf.put(p, (byte) '1');
        buf.put(p + 1, (byte) '0');
        buf.put(p + 2, (byte) '=');
        buf.put(p + 3, (byte) ('0' + sum / 100));
        buf.put(p + 4, (byte) ('0' + sum / 10 % 10));
        buf.put(p + 5, (byte) ('0' + sum % 10));
        buf.put(p + 6, SOH);
        p += 7;
        return p - start;
    }

    private void renderSecond(long sec) {
        secondCached = sec;
        final long days = Math.floorDiv(sec, 86400);
        final int s = Math.floorMod(sec, 86400);
        // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
        final long z = days + 719468;
        final long era = Math.floorDiv(z, 146097);
        final long doe = z - era * 146097;
        final long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        final long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        final long mp = (5 * doy + 2) / 153;
        final int d = (int) (doy - (153 * mp + 2) / 5 + 1);
        final int m = (int) (mp < 10 ? mp + 3 : mp - 9);
        final int y = (int) (yoe + era * 400 + (m <= 2 ? 1 : 0));
        two(0, y / 100);
        two(2, y % 100);
        two(4, m);
        two(6, d);
        second[8] = '-';
        two(9, s / 3600);
        second[11] = ':';
        two(12, s / 60 % 60);
        second[14] = ':';
        two(15, s % 60);
    }

    private void two(int at, int v) {
        second[at] = (byte) ('0' + v / 10);
        second[at + 1] = (byte) ('0' + v % 10);
    }

    private void putTag(int tag) {
        putDigits(tag);
        put((byte) '=');
    }

    private void putDigits(long v) {
        if (v < 0) {
            put((byte) '-');
            v = -v;
        }
        final int n = Ascii.digits(v);
        if (!room(n)) return;
        for (int i = p + n - 1; i >= p; i--) {
            buf.put(i, (byte) ('0' + v % 10));
            v /= 10;
        }
        p += n;
    }

    private boolean room(int n) {
        if (p + n <= limit) return true;
        ok = false;
        return false;
    }

    private void put(byte c) {
        if (room(1)) buf.put(p++, c);
    }

    private void put(byte[] s, int n) {
        if (room(n)) {
            buf.put(p, s, 0, n);
            p += n;
        }
    }
}
