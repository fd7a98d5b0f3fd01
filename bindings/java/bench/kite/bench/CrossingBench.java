package kite.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import kite.Acceptor;
import kite.Application;
import kite.Initiator;
import kite.Message;
import kite.Reply;
import kite.Session;
import kite.Warmup;

/**
 * The cost of the crossing per order: the acceptor thread's CPU time per
 * order (/proc/self/task/TID/schedstat: time on a CPU, so preemption by
 * other processes does not count) with kite-acceptor's C++ application (no
 * crossing) and with the same ExecutionReport written in Java through the
 * JNI binding (C callback, JNI upcall through a cached method ID, Java,
 * reply sent from the callback). The acceptor (single model, idle block:
 * its CPU time is its work and its wake-ups, the same for both) and the
 * initiator (spin_yield) run in this process on the given cores, 16 orders
 * in flight; variants alternate over the rounds.
 *
 * Usage: CrossingBench [--orders N] [--rounds R] [--server-core C] [--client-core C]
 */
public final class CrossingBench {
    static final class JavaAck implements Application {
        long nextId = 1;

        @Override
        public void onMessage(Session s, Message m, Reply r) {
            if (!m.isType('D')) {
                r.rejectUnsupported();
                return;
            }
            final int cl = m.indexOf(11), sym = m.indexOf(55), side = m.indexOf(54), px = m.indexOf(44);
            final long qty = m.getLong(38, 0), id = nextId++;
            r.begin("8").addLongPadded(37, id, 16).addField(11, m, cl).addLongPadded(17, id, 16).addChar(150, '0')
                    .addChar(39, '0').addField(55, m, sym).addField(54, m, side).addLong(38, qty).addField(44, m, px)
                    .addLong(151, qty).addLong(14, 0).addLong(6, 0).addTimestamp(60, m.timeNanos());
        }
    }

    static final class Client implements Application {
        final AtomicInteger logons = new AtomicInteger(), reports = new AtomicInteger();

        @Override
        public void onLogon(Session s) {
            logons.incrementAndGet();
        }

        @Override
        public void onMessage(Session s, Message m, Reply r) {
            reports.incrementAndGet();
        }
    }

    static String arg(String[] a, String name, String dflt) {
        for (int i = 0; i + 1 < a.length; ++i) if (a[i].equals(name)) return a[i + 1];
        return dflt;
    }

    static final String ORDER = "21=1|1=BENCH-ACCOUNT-001|55=KITE.XPAR|54=1|60=20261201-10:00:00.000000|38=100|40=2|44=101.25|59=0|";

    /** Server busy ns per order for one variant. */
    static double run(boolean java, int orders, int serverCore, int clientCore) throws Exception {
        final String acc = "[engine]\nmodel = \"single\"\nport = 0\nidle = \"block\"\ncores = [" + serverCore + "]\n"
                + "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nResetOnLogon = true\nStoreKind = \"null\"\n"
                + "UseDataDictionary = false\nCheckLatency = false\n[[session]]\nTargetCompID = \"BENCH0\"\n";
        final JavaAck app = new JavaAck();
        if (java) Warmup.run(app, "8=FIX.4.4|9=1|35=D|34=1|49=BENCH0|56=KITE|52=20261201-10:00:00.000|11=C000000000001|" + ORDER + "10=000|", 50_000);
        try (Acceptor a = Acceptor.start(acc, "crossing.toml", java ? app : null)) {
            final Client c = new Client();
            final String ini = "[engine]\nidle = \"spin_yield\"\ncores = [" + clientCore + "]\n"
                    + "[defaults]\nBeginString = \"FIX.4.4\"\nConnectionType = \"initiator\"\nSenderCompID = \"BENCH0\"\n"
                    + "TargetCompID = \"KITE\"\nResetOnLogon = true\nStoreKind = \"null\"\nCheckLatency = false\n"
                    + "SocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = " + a.port() + "\n[[session]]\n";
            try (Initiator in = Initiator.start(ini, "crossing-client.toml", c)) {
                while (c.logons.get() == 0) LockSupport.parkNanos(100_000);
                final Session s = in.session(0);
                final ByteBuffer b = ByteBuffer.allocateDirect(256);
                final byte[] tail = ORDER.replace('|', '\u0001').getBytes(StandardCharsets.US_ASCII);
                final byte[] d = {'D'};
                final int warm = orders / 5;
                long before = 0;
                for (int n = 0; n < warm + orders; ++n) {
                    if (n == warm) {
                        while (c.reports.get() < warm) LockSupport.parkNanos(10_000);
                        before = cpuNanos("kite-single");
                    }
                    while (n - c.reports.get() >= 16) LockSupport.parkNanos(10_000);
                    b.put(0, (byte) '1').put(1, (byte) '1').put(2, (byte) '=').put(3, (byte) 'C');
                    long v = n;
                    for (int k = 15; k >= 4; --k) {
                        b.put(k, (byte) ('0' + v % 10));
                        v /= 10;
                    }
                    b.put(16, (byte) 1).put(17, tail);
                    while (s.send(d, b, 17 + tail.length) == 7) LockSupport.parkNanos(10_000);
                }
                while (c.reports.get() < warm + orders) LockSupport.parkNanos(10_000);
                final long after = cpuNanos("kite-single");
                in.shutdown(2000);
                return (double) (after - before) / orders;
            }
        }
    }

    /** CPU time (ns) of this process's thread with that name. */
    static long cpuNanos(String name) throws java.io.IOException {
        try (java.nio.file.DirectoryStream<java.nio.file.Path> tasks =
                java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/proc/self/task"))) {
            for (java.nio.file.Path t : tasks) {
                if (java.nio.file.Files.readString(t.resolve("comm")).trim().equals(name))
                    return Long.parseLong(java.nio.file.Files.readString(t.resolve("schedstat")).trim().split(" ")[0]);
            }
        }
        throw new IllegalStateException("no thread " + name);
    }

    public static void main(String[] args) throws Exception {
        final int orders = Integer.parseInt(arg(args, "--orders", "200000"));
        final int rounds = Integer.parseInt(arg(args, "--rounds", "3"));
        final int serverCore = Integer.parseInt(arg(args, "--server-core", "1"));
        final int clientCore = Integer.parseInt(arg(args, "--client-core", "0"));
        final double[] cpp = new double[rounds], jni = new double[rounds];
        for (int r = 0; r < rounds; ++r) {
            cpp[r] = run(false, orders, serverCore, clientCore);
            jni[r] = run(true, orders, serverCore, clientCore);
            System.out.printf("round %d: server CPU per order: C++ application %.0f ns, Java through JNI %.0f ns%n", r + 1,
                    cpp[r], jni[r]);
        }
        Arrays.sort(cpp);
        Arrays.sort(jni);
        final double c = cpp[rounds / 2], j = jni[rounds / 2];
        System.out.printf("median of %d rounds, %d orders each: C++ %.0f ns/order, Java (JNI) %.0f ns/order, "
                + "crossing and Java application: %+.0f ns/order%n", rounds, orders, c, j, j - c);
    }
}
