package kite.pure;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.junit.jupiter.api.Test;

/** The serving threads' agents over real loopback sockets, driven from the test's thread. */
class AgentTest {
    private interface AgentFactory {
        Agent make(ServerSocketChannel listener, SessionRegistry registry, OrderApp app) throws IOException;
    }

    private static final AgentFactory SINGLE = (l, r, a) -> new SingleAgent(l, r, a, 2);
    private static final AgentFactory MONO = (l, r, a) -> new SelectorAgent(l, null, r, a, 2);

    private static ServerSocketChannel listener() throws IOException {
        final ServerSocketChannel l = ServerSocketChannel.open();
        l.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        return l;
    }

    private static int port(ServerSocketChannel l) throws IOException {
        return ((InetSocketAddress) l.getLocalAddress()).getPort();
    }

    private static void ordersAreAcknowledgedWithoutAllocating(AgentFactory f) throws IOException {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (ServerSocketChannel l = listener()) {
            final OrderApp app = new OrderApp(1_000_000_000_000_000L);
            final Agent agent = f.make(l, new SessionRegistry("BENCH", 1), app);
            try (LoopbackDrill drill = new LoopbackDrill(agent::doWork, port(l), "BENCH0")) {
                assertEquals('A', drill.logon());
                assertEquals(20_000, drill.orders(20_000));  // warm: class loading, the JIT, first-use caches
                // A per-order allocation shows in both batches (at least 16 B x 50,000); a one-off of the
                // runtime (a deoptimisation rebuilding an object the JIT had scalar-replaced: 144 B once,
                // under load) in one at most.
                final long[] allocated = new long[2];
                int acked = 0;
                for (int batch = 0; batch < 2; batch++) {
                    final long before = threads.getCurrentThreadAllocatedBytes();
                    acked += drill.orders(50_000);
                    allocated[batch] = threads.getCurrentThreadAllocatedBytes() - before;
                }
                assertEquals(100_000, acked);
                assertEquals(0, Math.min(allocated[0], allocated[1]),
                             "bytes allocated over 50,000 orders in each batch (server and client on this thread): " +
                             allocated[0] + ", " + allocated[1]);
                assertTrue(Math.max(allocated[0], allocated[1]) < 4096,
                           "bytes allocated in a batch: " + allocated[0] + ", " + allocated[1]);
                assertTrue(drill.lastAnswerSize() >= 190 && drill.lastAnswerSize() <= 260);
                assertEquals('5', drill.logout());
            }
            agent.close();
            assertEquals(120_000, app.orders());
        }
    }

    @Test
    void singleAcknowledgesOrdersWithoutAllocating() throws IOException {
        ordersAreAcknowledgedWithoutAllocating(SINGLE);
    }

    @Test
    void monoOnASelectorAcknowledgesOrdersWithoutAllocating() throws IOException {
        ordersAreAcknowledgedWithoutAllocating(MONO);
    }

    /** A raw client: bytes in, frames out, the agent run between. */
    private static final class Raw implements AutoCloseable {
        final Agent agent;
        final SocketChannel ch;
        final ByteBuffer rx = ByteBuffer.allocateDirect(65536).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        final Framer framer = new Framer();

        Raw(Agent agent, int port) throws IOException {
            this.agent = agent;
            ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            ch.configureBlocking(false);
        }

        void send(String s) throws IOException {
            final ByteBuffer b = Fix.buffer(s);
            while (b.hasRemaining()) ch.write(b);
        }

        /** The next message ('|' for SOH), "" when none within 300 ms, "closed" at the end. */
        String next() throws IOException {
            final long deadline = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() < deadline) {
                agent.doWork();
                if (framer.frame(rx, 0, rx.position()) == Framer.Status.COMPLETE) {
                    final String m = Fix.text(rx, 0, framer.size());
                    rx.flip().position(framer.size());
                    rx.compact();
                    return m;
                }
                if (ch.read(rx) < 0) return "closed";
            }
            return "";
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }
    }

    private static String msg(String type, long seq, String fields) {
        return Fix.frame("35=" + type + "|49=BENCH0|56=KITE|34=" + seq + "|52=20261201-10:00:00.000|" + fields);
    }

    @Test
    void aGarbledFrameIsIgnoredAndItsNumberUsedAgain() throws IOException {
        try (ServerSocketChannel l = listener()) {
            final Agent agent = SINGLE.make(l, new SessionRegistry("BENCH", 1), new OrderApp(1));
            try (Raw c = new Raw(agent, port(l))) {
                c.send(msg("A", 1, "98=0|108=30|141=Y|"));
                assertTrue(c.next().contains("|35=A|"));
                final String bad = msg("1", 2, "112=lost|");
                c.send(bad.substring(0, bad.length() - 4) + (bad.charAt(bad.length() - 4) == '9' ? "0" : "9") + bad.substring(bad.length() - 3));
                assertEquals("", c.next());
                c.send(msg("1", 2, "112=kept|"));
                assertTrue(c.next().contains("|112=kept|"));
                c.send("8=FIX.4.4\u00019=zz\u0001");  // cannot be framed: Logout, then closed
                assertTrue(c.next().contains("|35=5|"));
                assertEquals("closed", c.next());
            }
            agent.close();
        }
    }

    @Test
    void twoOrdersInOneWriteGetTwoReportsInOrder() throws IOException {
        try (ServerSocketChannel l = listener()) {
            final Agent agent = MONO.make(l, new SessionRegistry("BENCH", 1), new OrderApp(1));
            try (Raw c = new Raw(agent, port(l))) {
                c.send(msg("A", 1, "98=0|108=30|141=Y|"));
                assertTrue(c.next().contains("|35=A|"));
                final String order = "21=1|55=KITE.XPAR|54=1|38=100|40=2|44=101.25|";
                c.send(msg("D", 2, "11=C1|" + order) + msg("D", 3, "11=C2|" + order));
                assertTrue(c.next().contains("|11=C1|"));
                assertTrue(c.next().contains("|11=C2|"));
                agent.shutdown();
                assertTrue(c.next().contains("|35=5|"), "shutdown says Logout");
            }
            agent.close();
        }
    }
}
