package kite;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A borrowed view of one inbound FIX message: the frame's bytes and its
 * field index (tag, offset, length per field, header and trailer included),
 * over direct buffers made once per engine thread. Valid during
 * {@link Application#onMessage} only; reading allocates nothing (except
 * {@link #getString}).
 */
public final class Message {
    private ByteBuffer frame;
    private ByteBuffer fields;
    private int frameLength;
    private int fieldCount;
    private long msgSeqNum;
    private long timeNanos;

    Message(ByteBuffer frame, ByteBuffer fields) {
        rebind(frame, fields);
    }

    void rebind(ByteBuffer frame, ByteBuffer fields) {
        this.frame = frame;
        this.fields = fields.order(ByteOrder.nativeOrder());
    }

    void wrap(int frameLength, int fieldCount, long msgSeqNum, long timeNanos) {
        this.frameLength = frameLength;
        this.fieldCount = fieldCount;
        this.msgSeqNum = msgSeqNum;
        this.timeNanos = timeNanos;
    }

    /** The frame's bytes [0, frameLength()): "8=FIX.4.4\u00019=...". */
    public ByteBuffer frame() {
        return frame;
    }

    public int frameLength() {
        return frameLength;
    }

    public int fieldCount() {
        return fieldCount;
    }

    public int tagAt(int i) {
        return fields.getInt(i * 12);
    }

    public int offsetAt(int i) {
        return fields.getInt(i * 12 + 4);
    }

    public int lengthAt(int i) {
        return fields.getInt(i * 12 + 8);
    }

    /** MsgSeqNum (34). */
    public long msgSeqNum() {
        return msgSeqNum;
    }

    /** The session's clock reading for this message, UTC ns since the epoch. */
    public long timeNanos() {
        return timeNanos;
    }

    /** Position of the first field with this tag, or -1. */
    public int indexOf(int tag) {
        for (int i = 0; i < fieldCount; ++i) {
            if (fields.getInt(i * 12) == tag) return i;
        }
        return -1;
    }

    public boolean has(int tag) {
        return indexOf(tag) >= 0;
    }

    /** Whether MsgType (35) is the one-character type {@code c}. */
    public boolean isType(char c) {
        return fieldCount > 2 && lengthAt(2) == 1 && frame.get(offsetAt(2)) == (byte) c;
    }

    /** Whether the value of field i equals {@code ascii}. */
    public boolean valueEquals(int i, byte[] ascii) {
        final int len = lengthAt(i);
        if (len != ascii.length) return false;
        final int off = offsetAt(i);
        for (int k = 0; k < len; ++k) {
            if (frame.get(off + k) != ascii[k]) return false;
        }
        return true;
    }

    /** The first byte of the tag's value as a char, or {@code missing}. */
    public char getChar(int tag, char missing) {
        final int i = indexOf(tag);
        return i < 0 || lengthAt(i) == 0 ? missing : (char) (frame.get(offsetAt(i)) & 0xFF);
    }

    /** The tag's value as a signed integer, or {@code missing} when absent or not an integer. */
    public long getLong(int tag, long missing) {
        final int i = indexOf(tag);
        if (i < 0) return missing;
        int p = offsetAt(i);
        final int end = p + lengthAt(i);
        if (p == end) return missing;
        boolean negative = false;
        if (frame.get(p) == '-') {
            negative = true;
            ++p;
        }
        if (p == end || end - p > 18) return missing;
        long v = 0;
        for (; p < end; ++p) {
            final int d = frame.get(p) - '0';
            if (d < 0 || d > 9) return missing;
            v = v * 10 + d;
        }
        return negative ? -v : v;
    }

    /** The tag's value as a new String (allocates: not for the hot path), or null. */
    public String getString(int tag) {
        final int i = indexOf(tag);
        if (i < 0) return null;
        final byte[] b = new byte[lengthAt(i)];
        frame.get(offsetAt(i), b);
        return new String(b, StandardCharsets.US_ASCII);
    }

    /** Copies field i's value into {@code dst} at {@code at}; returns its length. */
    public int copyValue(int i, byte[] dst, int at) {
        final int len = lengthAt(i);
        frame.get(offsetAt(i), dst, at, len);
        return len;
    }
}
