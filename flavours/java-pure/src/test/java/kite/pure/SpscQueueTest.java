package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SpscQueueTest {
    @Test
    void isFifoAndRefusesWhenFull() {
        final SpscQueue<Integer> q = new SpscQueue<>(4);
        for (int i = 0; i < 4; i++) assertTrue(q.offer(i));
        assertFalse(q.offer(99));
        assertEquals(0, q.poll());
        assertTrue(q.offer(4));
        for (int i = 1; i <= 4; i++) assertEquals(i, q.poll());
        assertNull(q.poll());
    }

    @Test
    void refusesACapacityThatIsNotAPowerOfTwo() {
        assertThrows(IllegalArgumentException.class, () -> new SpscQueue<Integer>(6));
    }

    @Test
    void handsEveryElementOverInOrderBetweenTwoThreads() throws Exception {
        final SpscQueue<long[]> q = new SpscQueue<>(8);
        final int n = 200_000;
        final Thread producer = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                final long[] e = {i, i * 7L};  // fields written before offer() must be seen after poll()
                while (!q.offer(e)) Thread.onSpinWait();
            }
        });
        producer.start();
        for (int i = 0; i < n; i++) {
            long[] e;
            while ((e = q.poll()) == null) Thread.onSpinWait();
            assertEquals(i, e[0]);
            assertEquals(i * 7L, e[1]);
        }
        producer.join();
        assertNull(q.poll());
    }
}
