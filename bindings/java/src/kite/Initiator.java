package kite;

/**
 * Kite initiator sessions (libkite's kite_initiator) with a Java
 * application: [[session]] tables with ConnectionType = "initiator",
 * SocketConnectHost and SocketConnectPort, and an optional [engine] table
 * (transport, idle, cores, threads). Every session connects once, at start.
 * Same threading rules as {@link Acceptor}.
 */
public final class Initiator implements AutoCloseable {
    private long handle;
    private final Bridge bridge;

    private Initiator(long handle, Bridge bridge) {
        this.handle = handle;
        this.bridge = bridge;
    }

    public static Initiator start(String toml, String name, Application app) {
        java.util.Objects.requireNonNull(app, "application");
        final Bridge b = new Bridge(app);
        final Initiator i = new Initiator(Native.initiatorStart(toml, name, false, b), b);
        b.owner = i;
        return i;
    }

    public static Initiator startFile(String path, Application app) {
        java.util.Objects.requireNonNull(app, "application");
        final Bridge b = new Bridge(app);
        final Initiator i = new Initiator(Native.initiatorStart(path, path, true, b), b);
        b.owner = i;
        return i;
    }

    private long h() {
        if (handle == 0) throw new KiteException(KiteException.STATE, "initiator closed");
        return handle;
    }

    public int sessionCount() {
        return Native.initiatorSessionCount(h());
    }

    public Session session(int i) {
        final long s = Native.initiatorSession(h(), i);
        if (s == 0) throw new IndexOutOfBoundsException("session " + i);
        return bridge.session(s, i);
    }

    /** Logout to every logged-on session, wait up to waitMillis for the disconnects, stop. */
    public void shutdown(int waitMillis) {
        Native.initiatorShutdown(h(), waitMillis);
    }

    public void stop() {
        Native.initiatorStop(h());
    }

    public long applicationErrors() {
        return bridge.errors();
    }

    @Override
    public void close() {
        if (handle != 0) {
            Native.initiatorFree(handle);
            handle = 0;
        }
    }
}
