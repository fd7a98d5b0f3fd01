package kite.pure;

import java.util.concurrent.CountDownLatch;
import kite.harness.Harness;

/**
 * A named thread, pinned to one core, that runs an agent's duty cycle with
 * an idle strategy until stopped, then lets its sessions log out. Counts
 * the passes, the empty ones and the time of the busy ones for the
 * `server load:` line.
 */
public final class AgentRunner implements Runnable {
    private static final long DRAIN_NS = 3_000_000_000L;  // within the lab's 5 s grace

    private final String name;
    private final int core;
    private final Agent agent;
    private final IdleStrategy idle;
    private final CountDownLatch started;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile String pinError;
    private static final int PASSES = 1024;  // between looks at the stop flag
    private long polls, empty, busyNs, totalNs, last;

    public AgentRunner(String name, int core, Agent agent, IdleStrategy idle, CountDownLatch started) {
        this.name = name;
        this.core = core;
        this.agent = agent;
        this.idle = idle;
        this.started = started;
        this.thread = new Thread(this, name);  // the JVM gives the native thread this name (comm)
    }

    public String name() { return name; }
    public int core() { return core; }
    public Thread thread() { return thread; }
    /** Why pinning failed, or null. */
    public String pinError() { return pinError; }

    public void start() { thread.start(); }

    public void stop() { running = false; }

    @Override
    public void run() {
        try {
            if (core >= 0) Affinity.pinThisThread(core);
        } catch (RuntimeException e) {
            pinError = "cannot pin " + name + " to core " + core + ": " + e.getMessage();
            started.countDown();
            return;
        }
        started.countDown();
        final long t0 = System.nanoTime();
        last = t0;
        while (running) runPasses(PASSES);
        totalNs = System.nanoTime() - t0;
        agent.shutdown();
        final long deadline = System.nanoTime() + DRAIN_NS;
        while (!agent.drained() && System.nanoTime() < deadline) {
            if (agent.doWork() == 0) Thread.onSpinWait();
        }
        agent.close();
    }

    /**
     * n passes of the duty cycle, with their accounting. The loop lives here,
     * not in run(): the warm-up calls this method so often that the JIT
     * compiles it (the agent's work inlined) before the ready file, and the
     * serving thread's run() then only calls the compiled code.
     */
    public void runPasses(int n) {
        for (int i = 0; i < n; i++) {
            final int work = agent.doWork();
            final long t = System.nanoTime();
            polls++;
            if (work > 0) busyNs += t - last;
            else empty++;
            last = t;
            idle.idle(work);
        }
    }

    /** The thread's `server load:` line (docs/flavours.md). */
    public String loadLine() {
        return Harness.loadLine(name, polls, empty, busyNs, totalNs, agent.orders());
    }
}
