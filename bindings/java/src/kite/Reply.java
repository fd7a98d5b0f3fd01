package kite;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The answer to the message being handled, written into this engine
 * thread's reply buffer (direct, made once): {@link #begin} names the
 * MsgType, then the body's fields in order. The session adds the standard
 * header (8, 9, 35, 49, 56, 34, 52) and the trailer when the callback
 * returns. Valid during {@link Application#onMessage} only; writing
 * allocates nothing.
 */
public final class Reply {
    static final int NONE = 0, SEND = 1, REJECT = 2;
    static final int BODY = 16;  // [0,4) body length, [4,12) MsgType, then the body
    private static final byte SOH = 1;

    private ByteBuffer buf;
    private int pos;
    private int state;
    private final byte[] digits = new byte[20];

    Reply(ByteBuffer buf) {
        rebind(buf);
    }

    void rebind(ByteBuffer buf) {
        this.buf = buf.order(ByteOrder.nativeOrder());
    }

    void reset() {
        state = NONE;
        pos = BODY;
    }

    /** 0: nothing to send; 1: send; 2: reject as unsupported. Fixes the body length. */
    int finish() {
        if (state == SEND) buf.putInt(0, pos - BODY);
        return state;
    }

    /** Starts the reply with this MsgType (1 to 8 ASCII characters). */
    public Reply begin(CharSequence msgType) {
        final int n = msgType.length();
        if (n < 1 || n > 8) throw new IllegalArgumentException("MsgType must have 1 to 8 characters");
        for (int i = 0; i < 8; ++i) buf.put(4 + i, i < n ? (byte) msgType.charAt(i) : 0);
        pos = BODY;
        state = SEND;
        return this;
    }

    /**
     * Answers with a BusinessMessageReject (35=j, BusinessRejectReason 3:
     * unsupported message type) instead of a reply.
     */
    public void rejectUnsupported() {
        state = REJECT;
    }

    /** Body bytes written so far. */
    public int length() {
        return pos - BODY;
    }

    private void tag(int tag) {
        pos = putDigits(pos, tag);
        buf.put(pos++, (byte) '=');
    }

    private int putDigits(int at, long v) {
        int n = 0;
        do {
            digits[n++] = (byte) ('0' + (v % 10));
            v /= 10;
        } while (v != 0);
        while (n > 0) buf.put(at++, digits[--n]);
        return at;
    }

    /** tag=ASCII text (a CharSequence read char by char: a String constant allocates nothing). */
    public Reply add(int tag, CharSequence ascii) {
        tag(tag);
        for (int i = 0, n = ascii.length(); i < n; ++i) buf.put(pos++, (byte) ascii.charAt(i));
        buf.put(pos++, SOH);
        return this;
    }

    public Reply add(int tag, byte[] ascii) {
        tag(tag);
        buf.put(pos, ascii);
        pos += ascii.length;
        buf.put(pos++, SOH);
        return this;
    }

    public Reply addChar(int tag, char c) {
        tag(tag);
        buf.put(pos++, (byte) c);
        buf.put(pos++, SOH);
        return this;
    }

    public Reply addLong(int tag, long v) {
        tag(tag);
        if (v < 0) {
            buf.put(pos++, (byte) '-');
            v = -v;
        }
        pos = putDigits(pos, v);
        buf.put(pos++, SOH);
        return this;
    }

    /** tag=v as exactly {@code width} digits, zero-padded (v >= 0). */
    public Reply addLongPadded(int tag, long v, int width) {
        tag(tag);
        for (int i = width - 1; i >= 0; --i) {
            buf.put(pos + i, (byte) ('0' + (v % 10)));
            v /= 10;
        }
        pos += width;
        buf.put(pos++, SOH);
        return this;
    }

    /** tag= the value of field i of {@code m}, copied as it is. */
    public Reply addField(int tag, Message m, int i) {
        tag(tag);
        final int off = m.offsetAt(i), len = m.lengthAt(i);
        final ByteBuffer f = m.frame();
        for (int k = 0; k < len; ++k) buf.put(pos + k, f.get(off + k));
        pos += len;
        buf.put(pos++, SOH);
        return this;
    }

    /** tag=UTCTimestamp "YYYYMMDD-HH:MM:SS.sss" of UTC ns since the epoch. */
    public Reply addTimestamp(int tag, long epochNanos) {
        tag(tag);
        final long millis = Math.floorDiv(epochNanos, 1_000_000L);
        final long days = Math.floorDiv(millis, 86_400_000L);
        long ms = millis - days * 86_400_000L;
        // Civil date from days since 1970-01-01 (proleptic Gregorian).
        final long z = days + 719_468;
        final long era = Math.floorDiv(z, 146_097);
        final long doe = z - era * 146_097;
        final long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        final long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        final long mp = (5 * doy + 2) / 153;
        final long d = doy - (153 * mp + 2) / 5 + 1;
        final long mo = mp < 10 ? mp + 3 : mp - 9;
        final long y = yoe + era * 400 + (mo <= 2 ? 1 : 0);
        pos = two(four(pos, y), mo);
        pos = two(pos, d);
        buf.put(pos++, (byte) '-');
        pos = two(pos, ms / 3_600_000L);
        ms %= 3_600_000L;
        buf.put(pos++, (byte) ':');
        pos = two(pos, ms / 60_000L);
        ms %= 60_000L;
        buf.put(pos++, (byte) ':');
        pos = two(pos, ms / 1000);
        buf.put(pos++, (byte) '.');
        final long f = ms % 1000;
        buf.put(pos++, (byte) ('0' + f / 100));
        buf.put(pos++, (byte) ('0' + f / 10 % 10));
        buf.put(pos++, (byte) ('0' + f % 10));
        buf.put(pos++, SOH);
        return this;
    }

    private int four(int at, long v) {
        return two(two(at, v / 100), v % 100);
    }

    private int two(int at, long v) {
        buf.put(at, (byte) ('0' + v / 10));
        buf.put(at + 1, (byte) ('0' + v % 10));
        return at + 2;
    }
}
