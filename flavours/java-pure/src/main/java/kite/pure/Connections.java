package kite.pure;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;

/**
 * An agent's connections, made at start-up and reused: the open ones in
 * slots [0, active), the closed ones after. One session per connection.
 */
final class Connections {
    private final Connection[] all;
    private int active;

    Connections(int capacity, SessionRegistry registry, Application app) {
        all = new Connection[capacity];
        for (int i = 0; i < capacity; i++) all[i] = new Connection(registry, app);
    }

    int active() { return active; }
    Connection get(int i) { return all[i]; }
    boolean full() { return active == all.length; }

    /** Takes a free connection for ch (non-blocking, TCP_NODELAY); null when every one is in use. */
    Connection open(SocketChannel ch, long nowMs) throws IOException {
        if (active == all.length) return null;
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        final Connection c = all[active];
        c.slot = active++;
        c.open(ch, nowMs);
        return c;
    }

    /** Returns a closed connection's slot. */
    void release(Connection c) {
        final int i = c.slot;
        if (i < 0 || i >= active || all[i] != c) return;
        final Connection last = all[--active];
        all[i] = last;
        last.slot = i;
        all[active] = c;
        c.slot = -1;
    }
}
