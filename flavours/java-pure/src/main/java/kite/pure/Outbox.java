package kite.pure;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A connection's unsent bytes: messages are written in place at tail(),
 * committed, and flushed from head. The buffer is direct, so a channel
 * write copies nothing and allocates nothing.
 */
public final class Outbox {
    private final ByteBuffer buf;
    private int head, tail;

    public Outbox(int capacity) {
        buf = ByteBuffer.allocateDirect(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    public ByteBuffer buffer() { return buf; }
    public int head() { return head; }
    public int tail() { return tail; }
    public int capacity() { return buf.capacity(); }
    public boolean isEmpty() { return head == tail; }
    public int free() { return buf.capacity() - tail + head; }

    public void commit(int bytes) { tail += bytes; }

    /** Moves the unsent bytes to the front when fewer than `need` bytes remain after tail. */
    public void makeRoom(int need) {
        if (buf.capacity() - tail >= need || head == 0) return;
        buf.limit(tail).position(head);
        buf.compact();
        tail -= head;
        head = 0;
        buf.clear();
    }

    /** The unsent bytes as a readable view for a channel write; call consumed() after. */
    public ByteBuffer pending() {
        buf.limit(tail).position(head);
        return buf;
    }

    /** After a write through pending(): what the channel took. */
    public void consumed() {
        head = buf.position();
        buf.clear();
        if (head == tail) head = tail = 0;
    }

    public void clear() {
        head = tail = 0;
        buf.clear();
    }
}
