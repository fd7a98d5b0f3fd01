package kite;

/**
 * What an Acceptor or Initiator calls. Every method runs on one of Kite's
 * engine threads (named kite-single, kite-mono, kite-pool-N, kite-shard-N,
 * kite-init-N), which are attached to the JVM once, at their start. A
 * session's calls come from one thread, never two at once; different
 * sessions may be called concurrently (pool, shard models).
 *
 * An exception thrown from a method is caught at the boundary, reported on
 * stderr and counted ({@link Acceptor#applicationErrors()}); it never
 * reaches native code.
 */
public interface Application {
    /** First call on each engine thread (after it is named and pinned). */
    default void onThreadStart(String threadName) {}

    /** Last call on each engine thread. */
    default void onThreadStop(String threadName) {}

    default void onLogon(Session session) {}

    /** The session left the logged-on state (logout or disconnect). */
    default void onLogout(Session session, String reason) {}

    /**
     * An application message, in sequence. {@code message} and {@code reply}
     * are this thread's views, valid during the call only. Write the answer
     * with {@code reply.begin(...)} and its fields: it is sent when this
     * method returns, without a second crossing.
     */
    void onMessage(Session session, Message message, Reply reply);
}
