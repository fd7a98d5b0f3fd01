package kite;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/** The native side's way into an Application: one per Acceptor or Initiator. */
final class Bridge {
    final Application app;
    private volatile Session[] sessions = new Session[0];
    private final AtomicLong errors = new AtomicLong();
    Object owner;

    /** app null: the acceptor answers as kite-acceptor does (no Java callbacks). */
    Bridge(Application app) {
        this.app = app;
    }

    /** Called by native code on each engine thread, once, after it attached. */
    Dispatcher threadStarted(String name, ByteBuffer frame, ByteBuffer fields, ByteBuffer reply) {
        final Dispatcher d = new Dispatcher(this, name, frame, fields, reply);
        try {
            app.onThreadStart(name);
        } catch (Throwable t) {
            report(t);
        }
        return d;
    }

    Session session(long handle, int index) {
        final Session[] s = sessions;
        if (index < s.length && s[index] != null) return s[index];
        return makeSession(handle, index);
    }

    private synchronized Session makeSession(long handle, int index) {
        Session[] s = sessions;
        if (index >= s.length) {
            final Session[] bigger = new Session[index + 1];
            System.arraycopy(s, 0, bigger, 0, s.length);
            s = bigger;
        }
        if (s[index] == null) s[index] = new Session(handle, index, owner);
        sessions = s;
        return s[index];
    }

    void report(Throwable t) {
        if (errors.incrementAndGet() <= 10) {
            System.err.println("kite: the application threw on thread " + Thread.currentThread().getName() + ":");
            t.printStackTrace();
        }
    }

    long errors() {
        return errors.get();
    }
}
