package kite.pure;

import java.nio.ByteBuffer;

/**
 * Finds where a FIX frame ends: "8=...|9=N|" then N bytes of body then
 * "10=ddd|". Tells an incomplete frame (wait for bytes) from an invalid one
 * (cannot be resynchronised) and from a complete frame whose CheckSum is wrong
 * (its size is known, so it can be skipped). No allocation.
 */
public final class Framer {
    public enum Status { COMPLETE, INCOMPLETE, INVALID, BAD_CHECKSUM }

    /** The largest frame accepted; a BodyLength above it is invalid. */
    public static final int MAX_FRAME = 16 * 1024;

    private int size;
    private int bodyStart;

    /** Bytes of the last COMPLETE or BAD_CHECKSUM frame. */
    public int size() { return size; }

    /** Offset (from the frame's start) of the byte after "9=N|": where MsgType starts. */
    public int bodyStart() { return bodyStart; }

    /** Frames the bytes [at, end) of b (LITTLE_ENDIAN). */
    public Status frame(ByteBuffer b, int at, int end) {
        size = 0;
        final int left = end - at;
        if (left < 2) return left == 0 || b.get(at) == '8' ? Status.INCOMPLETE : Status.INVALID;
        if (b.get(at) != '8' || b.get(at + 1) != '=') return Status.INVALID;
        final int soh1 = Swar.indexOfSoh(b, at + 2, Math.min(end, at + 32));
        if (soh1 < 0) return left >= 32 ? Status.INVALID : Status.INCOMPLETE;
        int p = soh1 + 1;
        if (end - p < 3) return Status.INCOMPLETE;
        if (b.get(p) != '9' || b.get(p + 1) != '=') return Status.INVALID;
        p += 2;
        int length = 0;
        int digits = 0;
        while (true) {
            if (p >= end) return Status.INCOMPLETE;
            final byte c = b.get(p);
            if (c == 1) break;
            if (c < '0' || c > '9' || ++digits > 5) return Status.INVALID;
            length = length * 10 + (c - '0');
            p++;
        }
        if (digits == 0) return Status.INVALID;
        final int body = p + 1;
        final int trailer = body + length;
        final int total = trailer + 7 - at;
        if (total > MAX_FRAME) return Status.INVALID;
        if (end - at < total) return Status.INCOMPLETE;
        if (b.get(trailer) != '1' || b.get(trailer + 1) != '0' || b.get(trailer + 2) != '=' || b.get(trailer + 6) != 1)
            return Status.INVALID;
        int sent = 0;
        for (int i = 3; i < 6; i++) {
            final byte c = b.get(trailer + i);
            if (c < '0' || c > '9') return Status.INVALID;
            sent = sent * 10 + (c - '0');
        }
        size = total;
        bodyStart = body - at;
        return Swar.checksum(b, at, trailer) == sent ? Status.COMPLETE : Status.BAD_CHECKSUM;
    }
}
