package kite.pure;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A bounded lock-free queue for one producer thread and one consumer
 * thread: a slot is free while it holds null. offer() publishes with a
 * release store and poll() reads with an acquire load, so the element's
 * fields written before offer() are visible after poll(). No allocation.
 */
public final class SpscQueue<E> {
    private final AtomicReferenceArray<E> slots;
    private final int mask;
    private long tail;  // the producer's
    private long head;  // the consumer's

    public SpscQueue(int capacity) {
        if (capacity < 1 || Integer.bitCount(capacity) != 1)
            throw new IllegalArgumentException("queue capacity " + capacity + ": a power of two is needed");
        slots = new AtomicReferenceArray<>(capacity);
        mask = capacity - 1;
    }

    public int capacity() { return mask + 1; }

    /** Producer: false when the queue is full. */
    public boolean offer(E e) {
        if (e == null) throw new NullPointerException("null element");
        final int i = (int) (tail & mask);
        if (slots.get(i) != null) return false;
        slots.lazySet(i, e);
        tail++;
        return true;
    }

    /** Consumer: the oldest element, or null when empty. */
    public E poll() {
        final int i = (int) (head & mask);
        final E e = slots.get(i);
        if (e == null) return null;
        slots.lazySet(i, null);
        head++;
        return e;
    }
}
