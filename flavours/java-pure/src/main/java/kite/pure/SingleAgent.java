package kite.pure;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * The single model: one thread reads its session's socket directly with
 * non-blocking reads, no readiness call. A selector watches the listener
 * only, looked at with selectNow while no session is connected (and now and
 * then after, for a reconnect).
 */
public final class SingleAgent implements Agent {
    private static final int ACCEPT_EVERY = 4096;  // passes between looks at the listener while connected

    private final ServerSocketChannel listener;
    private final Selector acceptor;
    private final Connections conns;
    private final OrderApp app;
    private final Consumer<SelectionKey> onAcceptable = k -> acceptable = true;
    private boolean acceptable;
    private int tick;
    private long timerMs;
    private boolean shuttingDown;

    public SingleAgent(ServerSocketChannel listener, SessionRegistry registry, OrderApp app, int maxConnections)
        throws IOException {
        this.listener = listener;
        this.app = app;
        listener.configureBlocking(false);
        acceptor = Selector.open();
        listener.register(acceptor, SelectionKey.OP_ACCEPT);
        conns = new Connections(maxConnections, registry, app);
    }

    @Override
    public int doWork() {
        final long now = System.currentTimeMillis();
        int work = 0;
        if (!shuttingDown && !conns.full() && (conns.active() == 0 || ++tick == ACCEPT_EVERY)) {
            tick = 0;
            work += accept(now);
        }
        for (int i = 0; i < conns.active(); i++) {
            final Connection c = conns.get(i);
            final int r = c.service(now, true);
            if (r < 0) {
                conns.release(c);
                i--;
            } else {
                work += r;
            }
        }
        if (now != timerMs) {
            timerMs = now;
            for (int i = 0; i < conns.active(); i++) conns.get(i).onTimer(now);
        }
        return work;
    }

    private int accept(long now) {
        acceptable = false;
        try {
            acceptor.selectNow(onAcceptable);
            if (!acceptable) return 0;
            int n = 0;
            SocketChannel ch;
            while (!conns.full() && (ch = listener.accept()) != null) {
                conns.open(ch, now);
                n++;
            }
            return n;
        } catch (IOException e) {
            System.err.println("java-pure: accept: " + e.getMessage());
            return 0;
        }
    }

    @Override
    public void shutdown() {
        shuttingDown = true;
        final long now = System.currentTimeMillis();
        for (int i = 0; i < conns.active(); i++) conns.get(i).shutdown(now);
    }

    @Override
    public boolean drained() { return conns.active() == 0; }

    @Override
    public void close() {
        for (int i = conns.active() - 1; i >= 0; i--) conns.get(i).close();
        try {
            acceptor.close();
            listener.close();
        } catch (IOException ignored) {
            // stopping
        }
    }

    @Override
    public long orders() { return app.orders(); }
}
