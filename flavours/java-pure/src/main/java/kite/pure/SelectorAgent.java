package kite.pure;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.function.Consumer;

/**
 * Many sessions on one thread, on a Selector looked at with selectNow: the
 * mono model (with its listener), a shard (its own SO_REUSEPORT listener),
 * or a pool worker (channels handed over by the front door through its
 * queue). selectNow(Consumer) visits the ready keys without the selected-key
 * set, whose insertions allocate.
 */
public final class SelectorAgent implements Agent {
    private final Selector selector;
    private final ServerSocketChannel listener;   // null for a pool worker
    private final SpscQueue<SocketChannel> inbox;  // null unless a pool worker
    private final Connections conns;
    private final OrderApp app;
    private final Consumer<SelectionKey> onReady = this::onReady;
    private long now;
    private int keyWork;
    private long timerMs;
    private boolean shuttingDown;

    public SelectorAgent(ServerSocketChannel listener, SpscQueue<SocketChannel> inbox, SessionRegistry registry,
                         OrderApp app, int maxConnections) throws IOException {
        this.listener = listener;
        this.inbox = inbox;
        this.app = app;
        selector = Selector.open();
        if (listener != null) {
            listener.configureBlocking(false);
            listener.register(selector, SelectionKey.OP_ACCEPT);
        }
        conns = new Connections(maxConnections, registry, app);
    }

    @Override
    public int doWork() {
        now = System.currentTimeMillis();
        keyWork = 0;
        if (inbox != null) {
            SocketChannel ch;
            while ((ch = inbox.poll()) != null) adopt(ch);
        }
        try {
            selector.selectNow(onReady);
        } catch (IOException e) {
            System.err.println("java-pure: select: " + e.getMessage());
        }
        int work = keyWork;
        // Answers the socket would not take at once, a stalled reader, a close after the Logout.
        for (int i = 0; i < conns.active(); i++) {
            final Connection c = conns.get(i);
            if (!c.hasOutput()) continue;
            final int r = c.service(now, false);
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

    private void onReady(SelectionKey key) {
        if (key.attachment() == null) {
            if (!shuttingDown) accept();
            return;
        }
        final Connection c = (Connection) key.attachment();
        final int r = c.service(now, true);
        if (r < 0) {
            conns.release(c);
            key.attach(null);
            key.cancel();
        } else {
            keyWork += r;
        }
    }

    private void accept() {
        try {
            SocketChannel ch;
            while ((ch = listener.accept()) != null) adopt(ch);
        } catch (IOException e) {
            System.err.println("java-pure: accept: " + e.getMessage());
        }
    }

    private void adopt(SocketChannel ch) {
        keyWork++;
        try {
            final Connection c = conns.open(ch, now);
            if (c == null) {
                System.err.println("java-pure: every connection of this thread is in use: refusing one");
                ch.close();
                return;
            }
            ch.register(selector, SelectionKey.OP_READ, c);
        } catch (ClosedChannelException e) {
            // the peer went away meanwhile
        } catch (IOException e) {
            System.err.println("java-pure: cannot take a connection: " + e.getMessage());
        }
    }

    @Override
    public void shutdown() {
        shuttingDown = true;
        final long t = System.currentTimeMillis();
        for (int i = 0; i < conns.active(); i++) conns.get(i).shutdown(t);
    }

    @Override
    public boolean drained() { return conns.active() == 0; }

    @Override
    public void close() {
        for (int i = conns.active() - 1; i >= 0; i--) conns.get(i).close();
        try {
            selector.close();
            if (listener != null) listener.close();
        } catch (IOException ignored) {
            // stopping
        }
    }

    @Override
    public long orders() { return app.orders(); }
}
