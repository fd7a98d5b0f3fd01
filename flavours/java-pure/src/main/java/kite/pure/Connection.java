package kite.pure;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * One accepted socket and its session: reads into a direct buffer, frames
 * and indexes each complete message in place, hands it to the session, and
 * writes the answers from the outbox. Reused for the next socket when closed.
 */
public final class Connection {
    public static final int RX_BYTES = 64 * 1024;
    public static final int TX_BYTES = 128 * 1024;

    private final ByteBuffer rx = ByteBuffer.allocateDirect(RX_BYTES).order(ByteOrder.LITTLE_ENDIAN);
    private final Outbox out = new Outbox(TX_BYTES);
    private final Framer framer = new Framer();
    private final FieldIndex ix = new FieldIndex();
    private final Header header = new Header();
    private final Session session;
    private SocketChannel channel;
    private int rxEnd;
    private boolean stalled;  // frames wait for room in the outbox
    private long garbled;
    int slot = -1;            // the owning agent's index of this connection

    public Connection(SessionRegistry registry, Application app) {
        session = new Session(registry, app, out);
    }

    public Session session() { return session; }
    public SocketChannel channel() { return channel; }
    public boolean isOpen() { return channel != null; }
    public boolean hasOutput() { return !out.isEmpty() || stalled || session.closeWanted(); }
    /** Frames dropped for a wrong CheckSum. */
    public long garbled() { return garbled; }

    public void open(SocketChannel ch, long nowMs) {
        channel = ch;
        rxEnd = 0;
        stalled = false;
        out.clear();
        session.open(nowMs);
    }

    /**
     * One pass: read what the socket has (when `read`), handle every complete
     * frame, write what is queued. Returns 1 when it did something, 0 when
     * not, -1 when the connection is closed (now or before).
     */
    public int service(long nowMs, boolean read) {
        if (channel == null) return -1;
        int work = 0;
        if (read) {
            final int n;
            try {
                rx.limit(RX_BYTES).position(rxEnd);
                n = channel.read(rx);
            } catch (IOException e) {
                close();
                return -1;
            }
            if (n < 0) {
                close();
                return -1;
            }
            if (n > 0) {
                rxEnd += n;
                work = 1;
            }
        }
        if (work > 0 || stalled) {
            work |= handleFrames(nowMs);
            if (channel == null) return -1;
        }
        if (!out.isEmpty()) {
            work |= flush();
            if (channel == null) return -1;
        }
        if (session.closeWanted() && out.isEmpty()) {
            close();
            return -1;
        }
        return work;
    }

    /** Runs the session's timers. */
    public void onTimer(long nowMs) {
        if (channel != null) session.onTimer(nowMs);
    }

    /** The server stops: the session says Logout. */
    public void shutdown(long nowMs) {
        if (channel != null) session.shutdown(nowMs);
    }

    private int handleFrames(long nowMs) {
        stalled = false;
        int at = 0;
        int work = 0;
        while (at < rxEnd && !session.closeWanted()) {
            if (out.free() < Session.REPLY_ROOM) {
                flush();
                if (channel == null) return 1;
                if (out.free() < Session.REPLY_ROOM) {  // the peer reads slower than it writes: wait
                    stalled = true;
                    break;
                }
            }
            final Framer.Status s = framer.frame(rx, at, rxEnd);
            if (s == Framer.Status.INCOMPLETE) break;
            if (s == Framer.Status.INVALID) {
                session.invalidFrame(nowMs);
                at = rxEnd;
                break;
            }
            final int size = framer.size();
            if (s == Framer.Status.COMPLETE) {
                if (ix.build(rx, at, size) && header.read(ix)) session.onFrame(header, ix, nowMs);
                else session.invalidFrame(nowMs);
            } else {
                garbled++;  // a wrong CheckSum: ignored, its number unused (FIX)
            }
            at += size;
            work = 1;
        }
        if (at > 0) {
            rx.limit(rxEnd).position(at);
            rx.compact();
            rxEnd = rx.position();
        }
        return work;
    }

    private int flush() {
        try {
            final int n = channel.write(out.pending());
            out.consumed();
            return n > 0 ? 1 : 0;
        } catch (IOException e) {
            out.clear();
            close();
            return 1;
        }
    }

    public void close() {
        if (channel == null) return;
        session.closed();
        try {
            channel.close();
        } catch (IOException ignored) {
            // closing: nothing left to do with it
        }
        channel = null;
        out.clear();
        rxEnd = 0;
    }
}
