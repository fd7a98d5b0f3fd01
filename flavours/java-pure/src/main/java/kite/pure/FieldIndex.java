package kite.pure;

import java.nio.ByteBuffer;

/**
 * One indexed walk over a complete frame: each field's tag, value offset and
 * length, in order, and a tag-to-field table reset in O(1) by a generation
 * counter. Values are read on demand from the frame's buffer: integers and
 * decimals as fixed point, text as byte ranges. Nothing allocates after
 * construction; the first occurrence of a tag wins.
 */
public final class FieldIndex {
    public static final int MAX_FIELDS = 256;
    private static final int DIRECT_TAGS = 1024;

    private final int[] tags = new int[MAX_FIELDS];
    private final int[] offsets = new int[MAX_FIELDS];
    private final int[] lengths = new int[MAX_FIELDS];
    private final short[] slotOf = new short[DIRECT_TAGS];
    private final int[] generationOf = new int[DIRECT_TAGS];
    private int generation;
    private int count;
    private ByteBuffer buffer;
    private int frameStart;
    private int frameSize;

    /** Indexes the frame [at, at+size) of b; false when a field is malformed or there are too many. */
    public boolean build(ByteBuffer b, int at, int size) {
        buffer = b;
        frameStart = at;
        frameSize = size;
        count = 0;
        if (++generation == 0) {  // wrapped: forget every old generation
            java.util.Arrays.fill(generationOf, 0);
            generation = 1;
        }
        final int end = at + size;
        int p = at;
        while (p < end) {
            int tag = 0;
            int digits = 0;
            byte c;
            while (p < end && (c = b.get(p)) != '=') {
                if (c < '0' || c > '9' || ++digits > 9) return false;
                tag = tag * 10 + (c - '0');
                p++;
            }
            if (digits == 0 || p >= end) return false;
            final int value = p + 1;
            final int soh = Swar.indexOfSoh(b, value, end);
            if (soh < 0 || count == MAX_FIELDS) return false;
            tags[count] = tag;
            offsets[count] = value;
            lengths[count] = soh - value;
            if (tag < DIRECT_TAGS && generationOf[tag] != generation) {
                generationOf[tag] = generation;
                slotOf[tag] = (short) count;
            }
            count++;
            p = soh + 1;
        }
        return true;
    }

    public ByteBuffer buffer() { return buffer; }
    public int frameStart() { return frameStart; }
    public int frameSize() { return frameSize; }
    public int count() { return count; }
    public int tagAt(int field) { return tags[field]; }
    public int offsetAt(int field) { return offsets[field]; }
    public int lengthAt(int field) { return lengths[field]; }

    /** The field number of tag's first occurrence, or -1. */
    public int find(int tag) {
        if (tag >= 0 && tag < DIRECT_TAGS) return generationOf[tag] == generation ? slotOf[tag] : -1;
        for (int i = 0; i < count; i++) if (tags[i] == tag) return i;
        return -1;
    }

    public boolean has(int tag) { return find(tag) >= 0; }

    /** Offset of tag's value in buffer(), or -1 when absent. */
    public int offset(int tag) {
        final int f = find(tag);
        return f < 0 ? -1 : offsets[f];
    }

    /** Length of tag's value, or -1 when absent. */
    public int length(int tag) {
        final int f = find(tag);
        return f < 0 ? -1 : lengths[f];
    }

    /** A non-negative integer value, or `absent` when the tag is missing, empty or not all digits. */
    public long getLong(int tag, long absent) {
        final int f = find(tag);
        if (f < 0) return absent;
        return Ascii.parseLong(buffer, offsets[f], lengths[f], absent);
    }

    /** The single character value of tag, or 0 when absent or longer than one byte. */
    public byte getChar(int tag) {
        final int f = find(tag);
        return f < 0 || lengths[f] != 1 ? 0 : buffer.get(offsets[f]);
    }

    /** Whether tag's value is exactly the ASCII bytes of s. */
    public boolean equals(int tag, byte[] s) {
        final int f = find(tag);
        return f >= 0 && Ascii.equals(buffer, offsets[f], lengths[f], s, s.length);
    }

    /** Reads tag's value as a decimal into d; false when absent or malformed. */
    public boolean getDecimal(int tag, Decimal d) {
        final int f = find(tag);
        return f >= 0 && d.parse(buffer, offsets[f], lengths[f]);
    }
}
