package kite.pure;

import java.nio.ByteBuffer;

/**
 * The FIX.4.4 acceptor session of one connection, as the flavour contract
 * needs it: Logon (sequence numbers reset), Heartbeat, TestRequest, sequence
 * checks (a gap asks for a resend, a number too low without PossDupFlag logs
 * out), ResendRequest answered with a SequenceReset-GapFill (no message store:
 * nothing is replayed), SequenceReset, Logout, and timers. It takes a frame's
 * header and index and answers through the encoder into the outbox; the
 * connection owns the bytes and the socket. No allocation after construction.
 */
public final class Session {
    public enum State { AWAITING_LOGON, ACTIVE, LOGOUT_SENT, CLOSED }

    public static final int REJECT_REQUIRED_TAG_MISSING = 1;
    public static final int REJECT_VALUE_INCORRECT = 5;
    public static final int REJECT_INCORRECT_FORMAT = 6;
    public static final int REJECT_OTHER = 99;

    /** Room kept free in the outbox before a frame is handled: the most one message makes us send. */
    public static final int REPLY_ROOM = 2048;

    private static final byte[] TOO_LOW = Ascii.bytes("MsgSeqNum too low, expecting ");
    private static final byte[] BUT_RECEIVED = Ascii.bytes(" but received ");
    private static final byte[] FIRST_NOT_LOGON = Ascii.bytes("First message is not a Logon");
    private static final byte[] UNKNOWN_COMP = Ascii.bytes("Unknown session (CompIDs)");
    private static final byte[] ALREADY = Ascii.bytes("Session already logged on");
    private static final byte[] ENCRYPT = Ascii.bytes("EncryptMethod(98) must be 0");
    private static final byte[] HEARTBT = Ascii.bytes("HeartBtInt(108) missing or invalid");
    private static final byte[] COMPID = Ascii.bytes("CompID problem");
    private static final byte[] NO_SEQ = Ascii.bytes("MsgSeqNum(34) missing");
    private static final byte[] NO_TEST_REQ_ID = Ascii.bytes("TestReqID(112) missing");
    private static final byte[] NO_SENDING_TIME = Ascii.bytes("SendingTime(52) missing");
    private static final byte[] NO_ORIG_SENDING_TIME = Ascii.bytes("OrigSendingTime(122) required with PossDupFlag=Y");
    private static final byte[] BAD_NEW_SEQ = Ascii.bytes("NewSeqNo(36) missing or lower than expected");
    private static final byte[] LOGON_WHILE = Ascii.bytes("Logon while logged on");
    private static final byte[] NO_RESPONSE = Ascii.bytes("No response to TestRequest");
    private static final byte[] SHUTDOWN = Ascii.bytes("Server shutting down");
    private static final byte[] GARBLED = Ascii.bytes("Invalid frame");
    private static final byte[] TEST_REQ_ID = Ascii.bytes("KITE-TEST");
    private static final byte[] SERVER = Ascii.bytes("KITE");

    private final SessionRegistry registry;
    private final Application app;
    private final Outbox out;
    private final Encoder enc = new Encoder(SERVER);

    private State state = State.CLOSED;
    private int sessionId = -1;     // in the registry, once logged on
    private long expectedIn;        // the next MsgSeqNum we expect
    private long nextOut;           // the MsgSeqNum of our next message
    private long resendAskedUntil;  // the highest number seen beyond a gap we asked to be resent
    private int heartBtMs;
    private long lastSentMs, lastReceivedMs, testRequestSentMs, stateSinceMs;
    private final byte[] peer = new byte[32];  // the peer's SenderCompID
    private int peerLength;
    private int pendingStart = -1;  // outbox offset of the message begun and not yet sent
    private boolean closeWanted;

    public Session(SessionRegistry registry, Application app, Outbox out) {
        this.registry = registry;
        this.app = app;
        this.out = out;
    }

    public State state() { return state; }
    public long expectedIn() { return expectedIn; }
    public long nextOut() { return nextOut; }
    /** True once the connection should be closed (after the outbox is flushed). */
    public boolean closeWanted() { return closeWanted; }

    /** A new connection: wait for its Logon. */
    public void open(long nowMs) {
        state = State.AWAITING_LOGON;
        closeWanted = false;
        sessionId = -1;
        expectedIn = nextOut = 1;
        resendAskedUntil = 0;
        peerLength = 0;
        stateSinceMs = lastSentMs = lastReceivedMs = nowMs;
        testRequestSentMs = 0;
    }

    /** The connection is gone: forget the logon. */
    public void closed() {
        if (sessionId >= 0) registry.release(sessionId);
        sessionId = -1;
        state = State.CLOSED;
    }

    /** One complete frame with a good CheckSum, indexed, its header read. */
    public void onFrame(Header h, FieldIndex ix, long nowMs) {
        if (state == State.CLOSED || closeWanted) return;
        lastReceivedMs = nowMs;
        if (state == State.AWAITING_LOGON) {
            onLogon(h, ix, nowMs);
            return;
        }
        if (!h.targetIs(SERVER, SERVER.length) || !h.senderIs(peer, peerLength)) {
            logoutAndClose(COMPID, nowMs);
            return;
        }
        if (h.seqNum == 0) {
            logoutAndClose(NO_SEQ, nowMs);
            return;
        }
        if (!h.sendingTime) {
            rejectText(h, ix, Tag.SendingTime, REJECT_REQUIRED_TAG_MISSING, NO_SENDING_TIME, nowMs);
            consume(h);
            return;
        }
        final boolean reset = h.is('4');
        if (h.possDup && !reset && h.seqNum >= expectedIn && !h.origSendingTime) {
            rejectText(h, ix, Tag.OrigSendingTime, REJECT_REQUIRED_TAG_MISSING, NO_ORIG_SENDING_TIME, nowMs);
            consume(h);
            return;
        }
        if (reset && ix.getChar(Tag.GapFillFlag) != 'Y') {  // reset mode ignores MsgSeqNum
            onSequenceReset(h, ix, false, nowMs);
            return;
        }
        if (h.seqNum == expectedIn) {
            dispatch(h, ix, nowMs);
        } else if (h.seqNum > expectedIn) {
            if (h.is('5')) {
                dispatch(h, ix, nowMs);
                return;
            }
            if (h.is('2')) onResendRequest(ix, nowMs);  // serve theirs, then ask for ours
            askResend(h.seqNum, nowMs);
        } else if (!h.possDup) {
            logoutTooLow(h.seqNum, nowMs);
        }
    }

    private void dispatch(Header h, FieldIndex ix, long nowMs) {
        if (h.msgTypeLength == 1) {
            switch (h.type()) {
                case '0':
                    consume(h);
                    if (ix.has(Tag.TestReqID)) testRequestSentMs = 0;
                    return;
                case '1':
                    consume(h);
                    if (ix.length(Tag.TestReqID) <= 0) {
                        rejectText(h, ix, Tag.TestReqID, REJECT_REQUIRED_TAG_MISSING, NO_TEST_REQ_ID, nowMs);
                        return;
                    }
                    begin((byte) '0', nowMs).putBytes(Tag.TestReqID, ix.buffer(), ix.offset(Tag.TestReqID),
                                                      ix.length(Tag.TestReqID));
                    send();
                    return;
                case '2':
                    consume(h);
                    onResendRequest(ix, nowMs);
                    return;
                case '3':
                    consume(h);
                    return;
                case '4':
                    onSequenceReset(h, ix, true, nowMs);
                    return;
                case '5':
                    consume(h);
                    if (state != State.LOGOUT_SENT) sendLogout(null, nowMs);
                    closeWanted = true;
                    return;
                case 'A':
                    consume(h);
                    if (ix.getChar(Tag.ResetSeqNumFlag) == 'Y') {
                        expectedIn = h.seqNum + 1;
                        nextOut = 1;
                        sendLogon(true, nowMs);
                    } else {
                        rejectText(h, ix, 0, REJECT_OTHER, LOGON_WHILE, nowMs);
                    }
                    return;
                default:
                    break;
            }
        }
        consume(h);
        if (state == State.ACTIVE) app.onMessage(this, h, ix, nowMs);
    }

    private void onLogon(Header h, FieldIndex ix, long nowMs) {
        // Answers go to whoever the Logon says it is, even when it is refused.
        if (h.senderOffset >= 0) setPeer(ix.buffer(), h.senderOffset, h.senderLength);
        if (!h.is('A')) {
            logoutAndClose(FIRST_NOT_LOGON, nowMs);
            return;
        }
        final int k = h.targetIs(SERVER, SERVER.length) ? registry.lookup(ix.buffer(), h.senderOffset, h.senderLength)
                                                        : SessionRegistry.UNKNOWN;
        if (k == SessionRegistry.UNKNOWN) {
            logoutAndClose(UNKNOWN_COMP, nowMs);
            return;
        }
        if (ix.getLong(Tag.EncryptMethod, -1) != 0) {
            logoutAndClose(ENCRYPT, nowMs);
            return;
        }
        final long hb = ix.getLong(Tag.HeartBtInt, -1);
        if (hb < 0 || hb > 3600) {
            logoutAndClose(HEARTBT, nowMs);
            return;
        }
        if (h.seqNum == 0) {
            logoutAndClose(NO_SEQ, nowMs);
            return;
        }
        if (!registry.claim(k)) {
            logoutAndClose(ALREADY, nowMs);
            return;
        }
        sessionId = k;
        heartBtMs = (int) hb * 1000;
        // ResetOnLogon: both numbers start again at 1 whatever the Logon asks.
        expectedIn = 1;
        nextOut = 1;
        sendLogon(ix.getChar(Tag.ResetSeqNumFlag) == 'Y', nowMs);
        state = State.ACTIVE;
        stateSinceMs = nowMs;
        if (h.seqNum > expectedIn) askResend(h.seqNum, nowMs);
        else expectedIn = h.seqNum + 1;
    }

    private void onResendRequest(FieldIndex ix, long nowMs) {
        final long from = ix.getLong(Tag.BeginSeqNo, -1);
        if (from <= 0 || from >= nextOut) return;
        // Nothing is stored: everything from `from` is filled with one SequenceReset-GapFill.
        final int at = startMessage();
        enc.begin(out.buffer(), at, out.capacity(), (byte) '4', from, nowMs)
           .putChar(Tag.PossDupFlag, 'Y')
           .putTimestamp(Tag.OrigSendingTime, nowMs)
           .putChar(Tag.GapFillFlag, 'Y')
           .putLong(Tag.NewSeqNo, nextOut);
        commit(at, false, nowMs);
    }

    private void onSequenceReset(Header h, FieldIndex ix, boolean gapFill, long nowMs) {
        final long to = ix.getLong(Tag.NewSeqNo, -1);
        if (to > expectedIn) {
            expectedIn = to;
        } else if (to != expectedIn || gapFill) {
            rejectText(h, ix, Tag.NewSeqNo, REJECT_VALUE_INCORRECT, BAD_NEW_SEQ, nowMs);
            if (gapFill && h.seqNum == expectedIn) expectedIn++;
        }
    }

    private void askResend(long seen, long nowMs) {
        // One ResendRequest (to infinity, 16=0) per gap: none while an earlier one is still being answered.
        final boolean asked = expectedIn <= resendAskedUntil;
        if (seen > resendAskedUntil) resendAskedUntil = seen;
        if (asked) return;
        begin((byte) '2', nowMs).putLong(Tag.BeginSeqNo, expectedIn).putLong(Tag.EndSeqNo, 0);
        send();
    }

    private void consume(Header h) {
        if (h.seqNum == expectedIn) expectedIn++;
    }

    /** A frame that cannot be read (framing or a field malformed): the stream cannot be trusted any more. */
    public void invalidFrame(long nowMs) {
        if (state == State.ACTIVE) logoutAndClose(GARBLED, nowMs);
        else closeWanted = true;
    }

    /** Timers: heartbeats, TestRequest on silence, a Logout or Logon that gets no answer. */
    public void onTimer(long nowMs) {
        switch (state) {
            case AWAITING_LOGON:
                if (nowMs - stateSinceMs > 10_000) closeWanted = true;
                return;
            case LOGOUT_SENT:
                if (nowMs - stateSinceMs > 2_000) closeWanted = true;
                return;
            case ACTIVE:
                if (heartBtMs == 0 || closeWanted) return;
                if (nowMs - lastSentMs >= heartBtMs) {
                    begin((byte) '0', nowMs);
                    send();
                }
                if (testRequestSentMs == 0 && nowMs - lastReceivedMs >= heartBtMs + heartBtMs / 5) {
                    testRequestSentMs = nowMs;
                    begin((byte) '1', nowMs).putAscii(Tag.TestReqID, TEST_REQ_ID);
                    send();
                } else if (testRequestSentMs != 0 && nowMs - testRequestSentMs >= heartBtMs) {
                    logoutAndClose(NO_RESPONSE, nowMs);
                }
                return;
            default:
        }
    }

    /** The server is stopping: a Logout to a logged-on peer, then wait for its answer (or the timer). */
    public void shutdown(long nowMs) {
        if (state == State.ACTIVE && !closeWanted) {
            sendLogout(SHUTDOWN, nowMs);
        } else if (state != State.LOGOUT_SENT) {
            closeWanted = true;
        }
    }

    // ---------------------------------------------------------------- sending

    /** Starts a message of ours (header written); add fields, then send(). */
    public Encoder begin(byte msgType, long nowMs) {
        pendingStart = startMessage();
        lastSentMs = nowMs;
        return enc.begin(out.buffer(), pendingStart, out.capacity(), msgType, nextOut, nowMs);
    }

    /** Finishes and queues the message begun with begin(); false when it did not fit (the connection is closed). */
    public boolean send() {
        final int at = pendingStart;
        pendingStart = -1;
        return commit(at, true, lastSentMs);
    }

    /** A session-level Reject (35=3) of the message h. */
    public void reject(Header h, int refTag, int reason, long nowMs) {
        rejectText(h, null, refTag, reason, null, nowMs);
    }

    private void rejectText(Header h, FieldIndex ix, int refTag, int reason, byte[] text, long nowMs) {
        final Encoder e = begin((byte) '3', nowMs).putLong(Tag.RefSeqNum, h.seqNum);
        if (refTag != 0) e.putLong(Tag.RefTagID, refTag);
        if (h.msgTypeOffset >= 0) e.putBytes(Tag.RefMsgType, h.buffer(), h.msgTypeOffset, h.msgTypeLength);
        e.putLong(Tag.SessionRejectReason, reason);
        if (text != null) e.putAscii(Tag.Text, text);
        send();
    }

    private int startMessage() {
        out.makeRoom(REPLY_ROOM);
        return out.tail();
    }

    private boolean commit(int at, boolean numbered, long nowMs) {
        final int n = enc.finish();
        if (n == 0) {  // the peer does not read and the outbox is full: give up on it
            closeWanted = true;
            return false;
        }
        out.commit(n);
        if (numbered) nextOut++;
        lastSentMs = nowMs;
        return true;
    }

    private void sendLogon(boolean reset, long nowMs) {
        final Encoder e = begin((byte) 'A', nowMs).putLong(Tag.EncryptMethod, 0).putLong(Tag.HeartBtInt, heartBtMs / 1000);
        if (reset) e.putChar(Tag.ResetSeqNumFlag, 'Y');
        send();
    }

    private void sendLogout(byte[] text, long nowMs) {
        final Encoder e = begin((byte) '5', nowMs);
        if (text != null) e.putAscii(Tag.Text, text);
        send();
        state = State.LOGOUT_SENT;
        stateSinceMs = nowMs;
    }

    private void logoutAndClose(byte[] text, long nowMs) {
        sendLogout(text, nowMs);
        closeWanted = true;
    }

    private void logoutTooLow(long received, long nowMs) {
        begin((byte) '5', nowMs).putText(Tag.Text, TOO_LOW, expectedIn, BUT_RECEIVED, received);
        send();
        state = State.LOGOUT_SENT;
        closeWanted = true;
    }

    private void setPeer(ByteBuffer b, int at, int length) {
        peerLength = Math.min(length, peer.length);
        for (int i = 0; i < peerLength; i++) peer[i] = b.get(at + i);
        enc.target(peer, peerLength);
    }
}
