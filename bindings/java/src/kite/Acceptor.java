package kite;

/**
 * A running Kite acceptor (libkite's kite_acceptor) whose application is
 * Java. Started from a kite-acceptor TOML file or text (docs/acceptor.md:
 * every model, transport and idle strategy); when start returns, every
 * engine thread runs, named, pinned and attached to the JVM.
 *
 * Not thread-safe against itself: start, shutdown, stop and close from one
 * thread (never an engine thread). port(), session() and threadLoads() from
 * any thread.
 */
public final class Acceptor implements AutoCloseable {
    private long handle;
    private final Bridge bridge;

    private Acceptor(long handle, Bridge bridge) {
        this.handle = handle;
        this.bridge = bridge;
    }

    /**
     * From the file's text; {@code name} stands for the file in error
     * messages. {@code app} null: no Java application, the acceptor answers
     * as kite-acceptor does ([app] mode), and no engine thread attaches.
     */
    public static Acceptor start(String toml, String name, Application app) {
        final Bridge b = new Bridge(app);
        final Acceptor a = new Acceptor(Native.acceptorStart(toml, name, false, b), b);
        b.owner = a;
        return a;
    }

    public static Acceptor startFile(String path, Application app) {
        final Bridge b = new Bridge(app);
        final Acceptor a = new Acceptor(Native.acceptorStart(path, path, true, b), b);
        b.owner = a;
        return a;
    }

    private long h() {
        if (handle == 0) throw new KiteException(KiteException.STATE, "acceptor closed");
        return handle;
    }

    public int port() {
        return Native.acceptorPort(h());
    }

    public int sessionCount() {
        return Native.acceptorSessionCount(h());
    }

    /** The i-th configured session. */
    public Session session(int i) {
        final long s = Native.acceptorSession(h(), i);
        if (s == 0) throw new IndexOutOfBoundsException("session " + i);
        return bridge.session(s, i);
    }

    /** Logout to every logged-on session, wait up to [app] shutdown_wait_ms, stop. */
    public void shutdown() {
        Native.acceptorShutdown(h());
    }

    /** Stops at once; joins every engine thread. Idempotent. */
    public void stop() {
        Native.acceptorStop(h());
    }

    /** Server threads' loop counters (the pool's front door left out). */
    public ThreadLoad[] threadLoads() {
        final int n = Native.acceptorThreadCount(h());
        final ThreadLoad[] out = new ThreadLoad[n];
        final long[] v = new long[4];
        for (int i = 0; i < n; ++i) {
            final String name = Native.acceptorThreadLoad(handle, i, v);
            out[i] = new ThreadLoad(name, v[0], v[1], v[2], v[3]);
        }
        return out;
    }

    /** Exceptions the application threw (each caught at the boundary). */
    public long applicationErrors() {
        return bridge.errors();
    }

    /** Stops (if running) and frees the native acceptor. */
    @Override
    public void close() {
        if (handle != 0) {
            Native.acceptorFree(handle);
            handle = 0;
        }
    }
}
