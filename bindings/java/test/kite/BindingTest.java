package kite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/** The Java binding end to end: a Java acceptor driven by a Java initiator, both on libkite. */
class BindingTest {
    static final int CL_ORD_ID = 11, SYMBOL = 55, SIDE = 54, EXEC_TYPE = 150;
    static final long ONE_TIME_BYTES = 4096;

    static String acceptorToml(String model) {
        return "[engine]\nmodel = \"" + model + "\"\nport = 0\nidle = \"block\"\n"
                + "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nResetOnLogon = true\n"
                + "StoreKind = \"null\"\nUseDataDictionary = false\n"
                + "[[session]]\nTargetCompID = \"BENCH0\"\n";
    }

    static String initiatorToml(int port) {
        return "[engine]\nidle = \"block\"\n"
                + "[defaults]\nBeginString = \"FIX.4.4\"\nConnectionType = \"initiator\"\nSenderCompID = \"BENCH0\"\n"
                + "TargetCompID = \"KITE\"\nResetOnLogon = true\nStoreKind = \"null\"\nUseDataDictionary = false\n"
                + "SocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = " + port + "\n[[session]]\n";
    }

    /** The acceptor's application: ExecutionReport New per order; throws on 35=U2. */
    static final class Ack implements Application {
        final Set<String> threadNames = ConcurrentHashMap.newKeySet();
        final AtomicInteger starts = new AtomicInteger(), stops = new AtomicInteger(), logons = new AtomicInteger();
        final AtomicLong engineThreadId = new AtomicLong(-1);
        long nextId = 1;

        @Override
        public void onThreadStart(String name) {
            threadNames.add(name + "=" + Thread.currentThread().getName());
            engineThreadId.set(Thread.currentThread().getId());
            starts.incrementAndGet();
        }

        @Override
        public void onThreadStop(String name) {
            stops.incrementAndGet();
        }

        @Override
        public void onLogon(Session s) {
            logons.incrementAndGet();
        }

        @Override
        public void onMessage(Session s, Message m, Reply r) {
            if (m.isType('D')) {
                final long id = nextId++;
                r.begin("8").addLongPadded(37, id, 16).addField(CL_ORD_ID, m, m.indexOf(CL_ORD_ID))
                        .addLongPadded(17, id, 16).addChar(150, '0').addChar(39, '0')
                        .addField(SYMBOL, m, m.indexOf(SYMBOL)).addChar(SIDE, m.getChar(SIDE, '1'))
                        .addLong(151, m.getLong(38, 0)).addLong(14, 0).addLong(6, 0).addTimestamp(60, m.timeNanos());
            } else if (m.isType('U') && m.lengthAt(2) == 1) {
                r.rejectUnsupported();
            } else {
                throw new IllegalStateException("test: an application that throws");
            }
        }
    }

    /** The initiator's: counts reports whose ClOrdID is the next expected one. */
    static final class Client implements Application {
        final AtomicInteger reports = new AtomicInteger(), wrong = new AtomicInteger(), rejects = new AtomicInteger();
        final AtomicInteger logons = new AtomicInteger();
        final AtomicLong engineThreadId = new AtomicLong(-1);
        final byte[] expected = new byte[13];

        @Override
        public void onLogon(Session s) {
            logons.incrementAndGet();
        }
        final byte[] got = new byte[64];
        int next = 0;

        @Override
        public void onThreadStart(String name) {
            engineThreadId.set(Thread.currentThread().getId());
        }

        @Override
        public void onMessage(Session s, Message m, Reply r) {
            if (m.isType('j')) {
                rejects.incrementAndGet();
                return;
            }
            clOrdId(expected, next);
            final int i = m.indexOf(CL_ORD_ID);
            if (!m.isType('8') || i < 0 || !m.valueEquals(i, expected) || m.getChar(EXEC_TYPE, '?') != '0'
                    || m.copyValue(i, got, 0) != 13) {
                wrong.incrementAndGet();
            }
            ++next;
            reports.incrementAndGet();
        }
    }

    static void clOrdId(byte[] out, long n) {
        out[0] = 'C';
        for (int k = 12; k >= 1; --k) {
            out[k] = (byte) ('0' + n % 10);
            n /= 10;
        }
    }

    static final byte[] D = {'D'};
    static final byte[] ORDER_TAIL = "\u000121=1\u000155=KITE.XPAR\u000154=1\u000160=20261201-10:00:00.000\u000138=100\u000140=2\u000144=101.25\u0001"
            .getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** Writes order n's body into buf; returns its length. */
    static int order(ByteBuffer buf, byte[] scratch, long n) {
        buf.put(0, (byte) '1').put(1, (byte) '1').put(2, (byte) '=');
        clOrdId(scratch, n);
        buf.put(3, scratch, 0, 13);
        buf.put(16, ORDER_TAIL);
        return 16 + ORDER_TAIL.length;
    }

    static void await(AtomicInteger v, int want) {
        final long deadline = System.nanoTime() + 20_000_000_000L;
        while (v.get() < want && System.nanoTime() < deadline) LockSupport.parkNanos(100_000);
        assertTrue(v.get() >= want, "waited for " + want + ", got " + v.get());
    }

    /** Sends orders [from, to) with at most `window` unanswered. */
    static void send(Session s, Client c, ByteBuffer buf, byte[] scratch, int from, int to, int window) {
        for (int n = from; n < to; ++n) {
            while (n - c.reports.get() >= window) LockSupport.parkNanos(20_000);
            final int len = order(buf, scratch, n);
            int st;
            while ((st = s.send(D, buf, len)) == 7) LockSupport.parkNanos(20_000);
            assertEquals(0, st, "send status");
        }
    }

    @Test
    void ordersAreAnsweredWithoutJavaHeapAllocationInSteadyState() {
        final com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        mx.setThreadAllocatedMemoryEnabled(true);
        final Ack ack = new Ack();
        final Client client = new Client();
        try (Acceptor a = Acceptor.start(acceptorToml("mono"), "java-test.toml", ack)) {
            assertTrue(a.port() > 0);
            assertTrue(ack.threadNames.contains("kite-mono=kite-mono"), "engine thread attached under its name: " + ack.threadNames);
            try (Initiator in = Initiator.start(initiatorToml(a.port()), "java-initiator.toml", client)) {
                final Session s = in.session(0);
                await(ack.logons, 1);
                await(client.logons, 1);  // the initiator hears the Logon answer after the acceptor sent it
                final ByteBuffer buf = ByteBuffer.allocateDirect(256);
                final byte[] scratch = new byte[13];
                final int warm = 20_000, measured = 100_000;
                send(s, client, buf, scratch, 0, warm, 64);
                await(client.reports, warm);
                final long acc0 = mx.getThreadAllocatedBytes(ack.engineThreadId.get());
                final long cli0 = mx.getThreadAllocatedBytes(client.engineThreadId.get());
                final long main0 = mx.getThreadAllocatedBytes(Thread.currentThread().getId());
                send(s, client, buf, scratch, warm, warm + measured, 64);
                final long main1 = mx.getThreadAllocatedBytes(Thread.currentThread().getId());
                await(client.reports, warm + measured);
                final long acc1 = mx.getThreadAllocatedBytes(ack.engineThreadId.get());
                final long cli1 = mx.getThreadAllocatedBytes(client.engineThreadId.get());
                assertEquals(0, client.wrong.get(), "reports out of order or wrong");
                // Any allocation per order would be at least 16 bytes x 100,000; a
                // one-time event of the JIT (a deoptimization re-materialising an
                // object) may show as a few dozen bytes.
                assertTrue(acc1 - acc0 < ONE_TIME_BYTES, "acceptor's engine thread allocated " + (acc1 - acc0) + " bytes over " + measured + " orders");
                assertTrue(cli1 - cli0 < ONE_TIME_BYTES, "initiator's engine thread allocated " + (cli1 - cli0) + " bytes");
                assertTrue(main1 - main0 < ONE_TIME_BYTES, "the sending thread allocated " + (main1 - main0) + " bytes");
                System.out.printf("allocated over %d orders: acceptor thread %d B, initiator thread %d B, sender %d B%n",
                        measured, acc1 - acc0, cli1 - cli0, main1 - main0);

                // An unsupported type is rejected; an application exception is caught at the boundary.
                final ByteBuffer text = ByteBuffer.allocateDirect(16).put(0, "58=x\u0001".getBytes());
                assertEquals(0, s.send(new byte[] {'U'}, text, 5));
                await(client.rejects, 1);
                assertEquals(0, s.send(new byte[] {'U', '2'}, text, 5));
                final long deadline = System.nanoTime() + 10_000_000_000L;
                while (a.applicationErrors() == 0 && System.nanoTime() < deadline) LockSupport.parkNanos(1_000_000);
                assertEquals(1, a.applicationErrors());
                send(s, client, buf, scratch, warm + measured, warm + measured + 10, 4);
                await(client.reports, warm + measured + 10);
                in.shutdown(5000);
            }
            a.shutdown();
            final ThreadLoad[] loads = a.threadLoads();
            assertEquals(1, loads.length);
            assertEquals("kite-mono", loads[0].name());
            assertTrue(loads[0].cycles() > 0);
        }
        assertEquals(ack.starts.get(), ack.stops.get(), "every started thread stopped");
    }

    @Test
    void aBadConfigurationThrowsWithTheFileAndSetting() {
        final KiteException e = assertThrows(KiteException.class,
                () -> Acceptor.start("[engine]\nmodel = \"triple\"\nport = 0\n[[session]]\nBeginString = \"FIX.4.4\"\n"
                        + "SenderCompID = \"A\"\nTargetCompID = \"B\"\n", "bad.toml", (s, m, r) -> {}));
        assertEquals(KiteException.CONFIG, e.status());
        assertTrue(e.getMessage().contains("bad.toml") && e.getMessage().contains("model"), e.getMessage());
        final KiteException u = assertThrows(KiteException.class,
                () -> Acceptor.start("[engine]\ntransport = \"tcpdirect\"\nport = 0\n", "t.toml", (s, m, r) -> {}));
        assertEquals(KiteException.UNSUPPORTED, u.status());
        assertTrue(u.getMessage().startsWith("unsupported:"), u.getMessage());
    }

    @Test
    void versionIsLibkites() {
        assertTrue(Kite.version().startsWith("0.1.0"), Kite.version());
        assertEquals(100, Kite.versionNumber());
    }
}
