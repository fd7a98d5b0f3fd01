package kite.pure;

import java.util.concurrent.locks.LockSupport;

/** What a thread does after a pass that found no work (Agrona's idle strategies). */
public abstract class IdleStrategy {
    /** Called after each pass with the work it did. */
    public abstract void idle(int work);

    /** By name: spin (busy-spin), yield (spin then yield), block (spin, yield, then sleep in the kernel). */
    public static IdleStrategy of(String name) {
        switch (name) {
            case "spin": return new BusySpin();
            case "yield": return new SpinThenYield();
            case "block": return new Block();
            default: throw new IllegalArgumentException("idle strategy '" + name + "': expected spin, yield or block");
        }
    }

    /** Never leaves the core. */
    public static final class BusySpin extends IdleStrategy {
        @Override
        public void idle(int work) {
            if (work == 0) Thread.onSpinWait();
        }
    }

    /** Spins, then gives the core away with sched_yield while idle. */
    public static final class SpinThenYield extends IdleStrategy {
        private static final int SPINS = 1000;
        private int idle;

        @Override
        public void idle(int work) {
            if (work > 0) {
                idle = 0;
            } else if (++idle <= SPINS) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
    }

    /** Spins, yields, then parks with a growing timeout (1 us to 1 ms): a thread idle for long sleeps in the kernel. */
    public static final class Block extends IdleStrategy {
        private static final int SPINS = 100, YIELDS = 100;
        private static final long MIN_PARK_NS = 1_000, MAX_PARK_NS = 1_000_000;
        private int idle;
        private long parkNs = MIN_PARK_NS;

        @Override
        public void idle(int work) {
            if (work > 0) {
                idle = 0;
                parkNs = MIN_PARK_NS;
            } else if (++idle <= SPINS) {
                Thread.onSpinWait();
            } else if (idle <= SPINS + YIELDS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(parkNs);
                parkNs = Math.min(parkNs * 2, MAX_PARK_NS);
            }
        }
    }
}
