package kite.pure;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import kite.harness.Harness;

/**
 * Sets up a model's threads (docs/flavours.md "Threads"), warms the hot path,
 * writes the ready file, serves until stopped, then prints one
 * `server load:` line per serving thread and the `gc since ready:` line.
 */
public final class Server {
    /** Exit codes: 0 clean stop, 1 cannot serve (set-up failed), 3 unsupported. */
    public static final int OK = 0, FAILED = 1, UNSUPPORTED = 3;

    // Of the JVM's uptime: the warm-up's end, the compilers' wait after it, and after the serving threads start.
    private static final long WARMUP_END_MS = 5_500, SETTLED_BY_MS = 7_500, SERVING_SETTLED_BY_MS = 9_000;

    private final Options o;
    private final List<AgentRunner> runners = new ArrayList<>();
    private final List<ServerSocketChannel> listeners = new ArrayList<>();
    private FrontDoor frontDoor;
    private Thread frontThread;
    private final GcReport gc = new GcReport();

    public Server(Options o) { this.o = o; }

    /** The line for a cell this server cannot serve, or null. */
    public static String unsupported(Options o) {
        if (!o.transport.equals("kernel"))
            return "java-pure has no " + o.transport + " transport: it serves kernel TCP through NIO only";
        if (!o.store.equals("null"))
            return "java-pure keeps no message store (--store " + o.store +
                   "): a ResendRequest is answered with a gap fill";
        return null;
    }

    /** Serves until `stop` counts down; returns the exit code. */
    public int run(CountDownLatch stop) throws InterruptedException {
        final int core0 = o.cores.isEmpty() ? -1 : o.cores.get(0);
        if (o.busyPollUsecs > 0)
            System.err.println("java-pure: SO_BUSY_POLL " + o.busyPollUsecs +
                               " us not applied: the JDK has no busy-poll socket option (declared in the flavour file)");
        Affinity.load();  // the foreign linker's start-up, before the warm-up's time budget is set
        final long startMs = java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
        final long warmed = warmUp();
        final long warmedMs = java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime();
        final CountDownLatch started;
        try {
            final SessionRegistry registry = new SessionRegistry("BENCH", o.sessions);
            final long idBase = System.currentTimeMillis() * 1000;  // 16-digit IDs, as Kite's C++ application
            final int maxConnections = o.sessions + 4;  // room for reconnects while old connections close
            switch (o.model) {
                case "single": {
                    started = new CountDownLatch(1);
                    final SingleAgent a = new SingleAgent(listen(o.port, false), registry, new OrderApp(idBase), maxConnections);
                    runners.add(new AgentRunner("kite-single", core0, a, IdleStrategy.of(o.idle), started));
                    break;
                }
                case "mono": {
                    started = new CountDownLatch(1);
                    final SelectorAgent a = new SelectorAgent(listen(o.port, false), null, registry, new OrderApp(idBase),
                                                              maxConnections);
                    runners.add(new AgentRunner("kite-mono", core0, a, IdleStrategy.of(o.idle), started));
                    break;
                }
                case "shard": {
                    started = new CountDownLatch(o.workers);
                    int port = o.port;
                    for (int i = 0; i < o.workers; i++) {
                        final ServerSocketChannel l = listen(port, true);
                        port = ((InetSocketAddress) l.getLocalAddress()).getPort();  // the others share the first's
                        final SelectorAgent a = new SelectorAgent(l, null, registry, new OrderApp(idBase + i * 10_000_000_000_000L),
                                                                  maxConnections);
                        runners.add(new AgentRunner("kite-shard-" + i, core(i), a, IdleStrategy.of(o.idle), started));
                    }
                    break;
                }
                default: {  // pool
                    started = new CountDownLatch(o.workers + 1);
                    @SuppressWarnings({"unchecked", "rawtypes"})
                    final SpscQueue<SocketChannel>[] queues = new SpscQueue[o.workers];
                    for (int i = 0; i < o.workers; i++) {
                        queues[i] = new SpscQueue<>(64);
                        final SelectorAgent a = new SelectorAgent(null, queues[i], registry,
                                                                  new OrderApp(idBase + i * 10_000_000_000_000L), maxConnections);
                        runners.add(new AgentRunner("kite-pool-" + i, core(i), a, IdleStrategy.of(o.idle), started));
                    }
                    frontDoor = new FrontDoor(listen(o.port, false), queues);
                    final int coordinator = o.coordinatorCore >= 0 ? o.coordinatorCore : core0;
                    final String[] pinError = new String[1];
                    frontThread = new Thread(() -> {
                        try {
                            if (coordinator >= 0) Affinity.pinThisThread(coordinator);
                        } catch (RuntimeException e) {
                            pinError[0] = e.getMessage();
                            frontDoor.close();
                        }
                        started.countDown();
                        frontDoor.run();
                    }, "kite-front");
                    break;
                }
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("java-pure: " + e.getMessage());
            closeAll();
            return FAILED;
        }
        for (AgentRunner r : runners) r.start();
        if (frontThread != null) frontThread.start();
        started.await();
        for (AgentRunner r : runners) {
            if (r.pinError() != null) {
                System.err.println("java-pure: " + r.pinError());
                stopAll();
                return FAILED;
            }
        }
        if (frontDoor != null && !listeners.get(0).isOpen()) {
            System.err.println("java-pure: cannot pin kite-front to core " + o.coordinatorCore);
            stopAll();
            return FAILED;
        }
        confineRuntime();
        final int port;
        try {
            port = ((InetSocketAddress) listeners.get(0).getLocalAddress()).getPort();
        } catch (IOException e) {
            System.err.println("java-pure: " + e.getMessage());
            stopAll();
            return FAILED;
        }
        // Printed before the compilers' last wait: the line's first string concatenation makes the JVM
        // generate and compile code, which must not fall after the ready file.
        System.out.println("java-pure: " + o.model + " on " + o.bind + ":" + port + ", " + runners.size() +
                           " serving thread(s); JVM start " + startMs + " ms, warm-up " + warmed + " orders and the compilers' queue " +
                           (warmedMs - startMs) + " ms, serving at " +
                           java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() + " ms");
        // The serving threads' first idle passes take branches the warm-up never took (a listener with
        // no connection yet): the deoptimisation and recompile that follow belong before the ready file.
        waitForCompilers(SERVING_SETTLED_BY_MS);
        // Warm-up garbage goes now, so that a collection after the ready file is the cell's.
        System.gc();
        gc.mark();
        try {
            Harness.writeReady(o.readyFile, port);  // the same calls as the warm-up's rehearsal: nothing left to compile
        } catch (IOException e) {
            System.err.println("java-pure: cannot write the ready file " + o.readyFile + ": " + e.getMessage());
            stopAll();
            return FAILED;
        }
        stop.await();
        stopAll();
        for (AgentRunner r : runners) System.err.println(r.loadLine());
        System.err.println(gc.line());
        return OK;
    }

    /**
     * The JVM's own threads (compilers, VM thread, main...) go to the server's
     * cores that no serving thread holds, or share them all when every one
     * is taken: the lab's audit wants a busy thread of the server on the
     * server's cores, and a compilation after the ready file must not land
     * on the client's.
     */
    private void confineRuntime() {
        final java.util.Set<Integer> all = new java.util.TreeSet<>(o.cores);
        if (frontThread != null && o.coordinatorCore >= 0) all.add(o.coordinatorCore);
        if (all.isEmpty()) return;
        final java.util.Set<Integer> free = new java.util.TreeSet<>(all);
        final java.util.Set<String> roles = new java.util.HashSet<>();
        for (int i = 0; i < runners.size(); i++) {
            roles.add(runners.get(i).name());
            free.remove(runners.get(i).core());
        }
        if (frontThread != null) {
            roles.add(frontThread.getName());
            free.remove(o.coordinatorCore >= 0 ? o.coordinatorCore : o.cores.get(0));
        }
        Affinity.confineOtherThreads(free.isEmpty() ? all : free, roles);
    }

    private int core(int i) {
        return o.cores.isEmpty() ? -1 : o.cores.get(i % o.cores.size());
    }

    private ServerSocketChannel listen(int port, boolean reusePort) throws IOException {
        final InetAddress address;
        try {
            address = InetAddress.getByName(o.bind);
        } catch (UnknownHostException e) {
            throw new IOException("bad bind address " + o.bind);
        }
        final ServerSocketChannel l = ServerSocketChannel.open();
        listeners.add(l);
        l.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        if (reusePort) l.setOption(StandardSocketOptions.SO_REUSEPORT, true);
        try {
            l.bind(new InetSocketAddress(address, port), 1024);
        } catch (IOException e) {
            throw new IOException("cannot listen on " + o.bind + ":" + port + ": " + e.getMessage());
        }
        return l;
    }

    /**
     * Waits (at most 1.6 s) until the JIT's compiler threads ran less than 5% of
     * a 200 ms window: what the lab's audit measures of them after the ready
     * file. Their time comes from /proc/self/task (they are no Java threads).
     */
    private static void waitForCompilers(long settledByMs) {
        final long windowNs = 200_000_000L;
        final long leftMs = Math.max(0, settledByMs - java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
        final long deadline = System.nanoTime() + Math.min(1_600_000_000L, leftMs * 1_000_000L);
        long before = compilerNs();
        while (System.nanoTime() < deadline) {
            try {
                Thread.sleep(windowNs / 1_000_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            final long now = compilerNs();
            if (before >= 0 && now >= 0 && now - before < windowNs / 20) return;
            before = now;
        }
    }

    /** CPU time of the threads named "C1 CompilerThre..." and "C2 CompilerThre...", or -1 when unreadable. */
    private static long compilerNs() {
        long total = 0;
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                final String comm = Files.readString(t.resolve("comm"));
                if (!comm.contains("CompilerThre")) continue;
                final String stat = Files.readString(t.resolve("schedstat"));
                total += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return total;
    }

    private void stopAll() throws InterruptedException {
        if (frontDoor != null) frontDoor.close();
        for (AgentRunner r : runners) r.stop();
        for (AgentRunner r : runners) r.thread().join();
        if (frontThread != null) frontThread.join();
        closeAll();
    }

    private void closeAll() {
        for (ServerSocketChannel l : listeners) {
            try {
                l.close();
            } catch (IOException ignored) {
                // stopping
            }
        }
    }

    /**
     * Runs the serving code over loopback on this thread (the same classes
     * the model's threads run) for --warmup-orders orders or --warmup
     * seconds, whichever comes first: cycles of Logons, orders from every
     * session in turn, the session's other paths (those the lab's check
     * plays, so that they do not send the compiler back to work after the
     * ready file), and a Logout, a gap or a number too low. Then waits for
     * the compiler to finish what it queued. Returns the orders.
     */
    private long warmUp() {
        if (o.warmupS <= 0 || o.warmupOrders == 0) return 0;
        // The lab waits 10 s for the ready file: on a loaded machine the JVM's own start eats into
        // that, so the warm-up ends 5.5 s and the compilers' wait 7.5 s after the JVM started at the latest.
        final long leftMs = Math.max(0, WARMUP_END_MS - java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
        final long deadline = System.nanoTime() + Math.min((long) (o.warmupS * 1e9), leftMs * 1_000_000L);
        final int sessions = o.model.equals("single") ? 1 : 4;
        long orders = 0;
        try (ServerSocketChannel l = ServerSocketChannel.open()) {
            l.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
            final int port = ((InetSocketAddress) l.getLocalAddress()).getPort();
            final SessionRegistry registry = new SessionRegistry("BENCH", sessions);
            final OrderApp app = new OrderApp(0);
            // pool's workers have no listener but an inbox: the warm-up hands them its channels as the front door does.
            final SpscQueue<SocketChannel> inbox = o.model.equals("pool") ? new SpscQueue<>(64) : null;
            final Agent agent = o.model.equals("single") ? new SingleAgent(l, registry, app, sessions + 2)
                                : inbox != null          ? new SelectorAgent(null, inbox, registry, app, sessions + 2)
                                                         : new SelectorAgent(l, null, registry, app, sessions + 2);
            // The drill runs the serving loop itself (runPasses), so that it is compiled as it will serve.
            final AgentRunner runner = new AgentRunner("kite-warmup", -1, agent, IdleStrategy.of(o.idle),
                                                       new CountDownLatch(1));
            final Runnable pump = () -> runner.runPasses(1);
            final LoopbackDrill[] drills = new LoopbackDrill[sessions];
            for (int cycle = 0; orders < o.warmupOrders && System.nanoTime() < deadline; cycle++) {
                for (int k = 0; k < sessions; k++) {
                    drills[k] = new LoopbackDrill(pump, port, "BENCH" + k);
                    if (inbox != null && !inbox.offer(l.accept())) throw new IOException("the warm-up's inbox is full");
                    drills[k].logon();
                }
                // Short cycles, so that the profiled code sees connections come and go often.
                for (int i = 0; i < 400; i++) {
                    if (i % 2 == 0) {  // every session's order in flight at once: several ready keys per select
                        for (LoopbackDrill d : drills) d.sendOrder();
                        for (LoopbackDrill d : drills) orders += d.answer() == '8' ? 1 : 0;
                    } else {
                        for (LoopbackDrill d : drills) orders += d.orders(1);
                    }
                }
                // Idle passes with every session connected, as a served cell spins between orders: they reach
                // the branches a few passes never do (single's look at its listener every 4096 passes).
                if (cycle % 8 == 0) runner.runPasses(5_000);
                drills[0].sessionPaths();
                if (cycle % 3 == 1) drills[0].gap();
                if (cycle % 3 == 2) drills[0].tooLow();
                else drills[0].logout();
                for (int k = 1; k < sessions; k++) drills[k].logout();
                for (LoopbackDrill d : drills) d.close();
            }
            agent.close();
        } catch (IOException e) {
            System.err.println("java-pure: warm-up: " + e.getMessage() + " (serving unwarmed)");
        }
        try {
            Harness.rehearseReady(o.readyFile);
        } catch (IOException e) {
            System.err.println("java-pure: warm-up: " + e.getMessage());
        }
        waitForCompilers(SETTLED_BY_MS);
        return orders;
    }
}
