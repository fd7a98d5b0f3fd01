package kite.pure;

import java.nio.ByteBuffer;

/**
 * The standard header of an indexed frame, read from the index: MsgType,
 * MsgSeqNum, the CompIDs and the flags the session checks. A view: the
 * ranges point into the index's buffer and are valid until the next frame.
 */
public final class Header {
    public int msgTypeOffset = -1, msgTypeLength;
    public long seqNum;        // 0 when absent or malformed
    public int senderOffset = -1, senderLength;
    public int targetOffset = -1, targetLength;
    public boolean sendingTime;
    public boolean possDup;
    public boolean origSendingTime;
    private ByteBuffer buffer;

    /** Reads the header of ix's frame; false when BeginString or MsgType is missing. */
    public boolean read(FieldIndex ix) {
        buffer = ix.buffer();
        msgTypeOffset = ix.offset(Tag.MsgType);
        msgTypeLength = ix.length(Tag.MsgType);
        seqNum = ix.getLong(Tag.MsgSeqNum, 0);
        senderOffset = ix.offset(Tag.SenderCompID);
        senderLength = ix.length(Tag.SenderCompID);
        targetOffset = ix.offset(Tag.TargetCompID);
        targetLength = ix.length(Tag.TargetCompID);
        sendingTime = ix.length(Tag.SendingTime) > 0;
        possDup = ix.getChar(Tag.PossDupFlag) == 'Y';
        origSendingTime = ix.length(Tag.OrigSendingTime) > 0;
        return msgTypeLength > 0 && ix.tagAt(0) == Tag.BeginString;
    }

    public ByteBuffer buffer() { return buffer; }

    /** MsgType's first character. */
    public byte type() { return buffer.get(msgTypeOffset); }

    /** Whether MsgType is the one character c. */
    public boolean is(char c) { return msgTypeLength == 1 && buffer.get(msgTypeOffset) == c; }

    public boolean senderIs(byte[] s, int length) {
        return senderOffset >= 0 && Ascii.equals(buffer, senderOffset, senderLength, s, length);
    }

    public boolean targetIs(byte[] s, int length) {
        return targetOffset >= 0 && Ascii.equals(buffer, targetOffset, targetLength, s, length);
    }
}
