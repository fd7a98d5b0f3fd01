package kite;

import java.nio.ByteBuffer;

/** One configured FIX session of an Acceptor or Initiator; lives as long as it. */
public final class Session {
    private final long handle;
    private final int index;
    private final String id;
    private final Object owner;  // keeps the native handle's owner reachable

    Session(long handle, int index, Object owner) {
        this.handle = handle;
        this.index = index;
        this.owner = owner;
        this.id = Native.sessionId(handle);
    }

    /** "FIX.4.4:KITE->BENCH0". */
    public String id() {
        return id;
    }

    /** Position in the configuration file (0-based). */
    public int index() {
        return index;
    }

    public boolean loggedOn() {
        return Native.sessionLoggedOn(handle);
    }

    /**
     * Sends an application message from outside a callback (any thread): the
     * body (fields after the standard header, "tag=value\u0001..." bytes, in
     * a direct buffer from position 0 to {@code length}) is copied into the
     * session's queue and sent by its engine thread at the next timer turn.
     * Returns 0 (queued), 6 (not logged on), 7 (queue full: try again) or 8
     * (too large): kite_status values. Allocates nothing.
     *
     * @param msgType MsgType as ASCII bytes (e.g. {'D'})
     */
    public int send(byte[] msgType, ByteBuffer body, int length) {
        if (!body.isDirect()) throw new IllegalArgumentException("send: body must be a direct ByteBuffer");
        if (length < 0 || length > body.capacity()) throw new IllegalArgumentException("send: bad length");
        return Native.sessionSend(handle, msgType, body, length);
    }

    @Override
    public String toString() {
        return id;
    }

    Object owner() {
        return owner;
    }
}
