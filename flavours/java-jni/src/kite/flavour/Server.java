package kite.flavour;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import kite.Acceptor;
import kite.Application;
import kite.Initiator;
import kite.Kite;
import kite.KiteException;
import kite.Message;
import kite.Reply;
import kite.Session;
import kite.ThreadLoad;
import kite.Warmup;
import kite.harness.Harness;

/**
 * The java-jni flavour (docs/flavours.md): the lab's order-entry server with
 * its application in Java (OrderAck) on libkite through the Java binding.
 * Arguments: --acceptor-config FILE (the lab's kite-acceptor file), --transport
 * (tls is refused), --bind (the warm-up client connects there), --ready-file
 * (lab/flavours/java-jni.toml).
 *
 * Before the ready file it warms up, so that the JIT has compiled the
 * order path and the compiler threads are quiet when the lab measures:
 * OrderAck's Java path WARMUP_CALLS times on the main thread (kite.Warmup),
 * then an in-process Kite initiator logs on as BENCH0 and sends up to
 * WARMUP_ORDERS orders through the whole path (socket, session, JNI) for at
 * most a second, logs out, and its thread ends.
 */
public final class Server {
    // In-process: the Java path alone, as often as the JIT needs to compile it.
    static final int WARMUP_CALLS = 50_000;
    static final String WARMUP_ORDER = "8=FIX.4.4|9=178|35=D|34=2|49=BENCH0|52=20261201-10:00:00.000|56=KITE|11=C000000000001|"
            + "21=1|1=BENCH-ACCOUNT-001|55=KITE.XPAR|54=1|60=20261201-10:00:00.000000|38=100|40=2|44=101.25|59=0|10=000|";
    // The other application paths the lab's check plays: an unknown type, an order lacking Symbol.
    static final String WARMUP_OTHER = "8=FIX.4.4|9=52|35=XX|34=3|49=BENCH0|52=20261201-10:00:00.000|56=KITE|10=000|";
    static final String WARMUP_INCOMPLETE = "8=FIX.4.4|9=150|35=D|34=4|49=BENCH0|52=20261201-10:00:00.000|56=KITE|"
            + "11=C000000000002|21=1|1=BENCH-ACCOUNT-001|54=1|60=20261201-10:00:00.000000|38=100|40=2|44=101.25|10=000|";
    // Over the wire: every other path (logon, JNI, session) once more, briefly.
    static final int WARMUP_ORDERS = 500;
    static final long WARMUP_LIMIT_NS = 1_000_000_000L;

    static String arg(String[] a, String name, String dflt) {
        for (int i = 0; i + 1 < a.length; ++i) if (a[i].equals(name)) return a[i + 1];
        return dflt;
    }

    static String quoted(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /** The warm-up client: closed loop, a window of orders in flight. */
    static final class WarmupClient implements Application {
        final CountDownLatch logon = new CountDownLatch(1);
        final AtomicInteger reports = new AtomicInteger();

        @Override
        public void onLogon(Session s) {
            logon.countDown();
        }

        @Override
        public void onMessage(Session s, Message m, Reply r) {
            reports.incrementAndGet();
        }
    }

    static void warmUp(int port, String bind) throws InterruptedException {
        final String host = bind.equals("0.0.0.0") ? "127.0.0.1" : bind;
        final WarmupClient w = new WarmupClient();
        try (Initiator in = Initiator.start("[engine]\nidle = \"spin_yield\"\n[defaults]\nBeginString = \"FIX.4.4\"\n"
                + "ConnectionType = \"initiator\"\nSenderCompID = \"BENCH0\"\nTargetCompID = \"KITE\"\n"
                + "ResetOnLogon = true\nStoreKind = \"null\"\nSocketConnectHost = " + quoted(host) + "\n"
                + "SocketConnectPort = " + port + "\n[[session]]\n", "java-jni warm-up", w)) {
            if (!w.logon.await(5, java.util.concurrent.TimeUnit.SECONDS)) {
                System.err.println("java-jni: warm-up client did not log on; serving without warm-up");
                return;
            }
            final Session s = in.session(0);
            final ByteBuffer b = ByteBuffer.allocateDirect(256);
            final byte[] d = {'D'};
            final long deadline = System.nanoTime() + WARMUP_LIMIT_NS;
            for (int n = 0; n < WARMUP_ORDERS && System.nanoTime() < deadline; ++n) {
                while (n - w.reports.get() >= 32 && System.nanoTime() < deadline) LockSupport.parkNanos(20_000);
                b.clear();
                b.put(("11=W" + n + "\u000121=1\u00011=BENCH-ACCOUNT-001\u000155=KITE.XPAR\u000154=1\u0001"
                        + "60=20261201-10:00:00.000000\u000138=100\u000140=2\u000144=101.25\u000159=0\u0001")
                        .getBytes(StandardCharsets.US_ASCII));
                while (s.send(d, b, b.position()) == 7) LockSupport.parkNanos(20_000);
            }
            System.out.printf("java-jni: warm-up %d orders in %.2f s%n", w.reports.get(),
                    (System.nanoTime() - deadline + WARMUP_LIMIT_NS) * 1e-9);
            in.shutdown(2000);
        }
    }

    /**
     * Waits, at most 2 s, until the JIT's compiler threads ran under 5% of a
     * 200 ms window: the lab's audit refuses a cell in which they burn CPU.
     * Their time comes from /proc/self/task (they are no Java threads).
     */
    static void awaitCompilers() throws InterruptedException {
        final long deadline = System.nanoTime() + 2_000_000_000L;
        long before = compilerNanos();
        while (System.nanoTime() < deadline) {
            Thread.sleep(200);
            final long now = compilerNanos();
            if (before >= 0 && now >= 0 && now - before < 10_000_000L) return;
            before = now;
        }
    }

    /** CPU time of the "C1/C2 CompilerThre..." threads, or -1 when unreadable. */
    static long compilerNanos() {
        long total = 0;
        try (var tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                if (!Files.readString(t.resolve("comm")).contains("CompilerThre")) continue;
                final String stat = Files.readString(t.resolve("schedstat"));
                total += Long.parseLong(stat.substring(0, stat.indexOf(' ')));
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return total;
    }

    public static void main(String[] args) throws Exception {
        for (String a : args) {
            if (a.equals("--version")) {
                System.out.println("java-jni libkite " + Kite.version() + " java=\"" + System.getProperty("java.vm.name")
                        + " " + System.getProperty("java.runtime.version") + "\"");
                return;
            }
        }
        if (arg(args, "--transport", "kernel").equals("tls")) {
            // libkite would serve it from the file's [tls] table, but the flavour declares no tls: unchecked.
            System.err.println("unsupported: java-jni declares no tls transport (lab/flavours/java-jni.toml)");
            System.exit(3);
        }
        // The cell's kite-acceptor file, rendered by the lab for every flavour on Kite's engine.
        final String file = arg(args, "--acceptor-config", "");
        final String config;
        try {
            config = Files.readString(Path.of(file));
        } catch (IOException | RuntimeException e) {
            System.err.println("java-jni: cannot read the acceptor file '" + file + "' (--acceptor-config): " + e.getMessage());
            System.exit(1);
            return;
        }
        final long t0 = System.nanoTime();
        final OrderAck app = new OrderAck();
        final Acceptor acceptor;
        try {
            acceptor = Acceptor.start(config, file, app);
        } catch (KiteException e) {
            if (e.status() == KiteException.UNSUPPORTED) {
                System.err.println(e.getMessage().startsWith("unsupported:") ? e.getMessage() : "unsupported: " + e.getMessage());
                System.exit(3);
            }
            System.err.println("java-jni: " + e.getMessage());
            System.exit(1);
            return;
        }
        final int port = acceptor.port();
        final long t1 = System.nanoTime();
        // Interleaved, so that the compiled order path has seen every branch those take.
        for (int round = 0; round < 50; ++round) {
            Warmup.run(app, WARMUP_ORDER, WARMUP_CALLS / 50);
            Warmup.run(app, WARMUP_OTHER, 20);
            Warmup.run(app, WARMUP_INCOMPLETE, 20);
        }
        final long t2 = System.nanoTime();
        warmUp(port, arg(args, "--bind", "127.0.0.1"));
        System.out.printf("java-jni: acceptor started in %.2f s, Java path warmed in %.2f s, wire warm-up done %.2f s%n",
                (t1 - t0) * 1e-9, (t2 - t1) * 1e-9, (System.nanoTime() - t2) * 1e-9);
        app.orders = 0;
        final String ready = arg(args, "--ready-file", "ready");
        Harness.rehearseReady(ready);
        awaitCompilers();

        Harness.onTerminate(() -> {
            acceptor.shutdown();  // Logout to every logged-on session, as kite-acceptor on SIGTERM
            final ThreadLoad[] loads = acceptor.threadLoads();
            for (ThreadLoad l : loads) {
                final long orders = loads.length == 1 ? app.orders : 0;
                System.err.println(Harness.loadLine(l.name(), l.cycles(), l.idleCycles(), l.busyNanos(), l.totalNanos(), orders));
            }
        }, () -> 0);
        Harness.writeReady(ready, port);
        new CountDownLatch(1).await();  // the shutdown hook ends the process
    }
}
