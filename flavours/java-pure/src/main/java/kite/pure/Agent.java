package kite.pure;

/** A server thread's work: one duty cycle per doWork(), run by an AgentRunner with an idle strategy. */
public interface Agent {
    /** One pass; returns how much work it did (0: nothing to do). */
    int doWork();

    /** The server stops: every logged-on session sends its Logout. */
    void shutdown();

    /** After shutdown(): true once every connection is closed. */
    boolean drained();

    /** Releases sockets and selectors. */
    void close();

    /** Orders answered so far. */
    long orders();
}
