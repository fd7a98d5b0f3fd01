package kite.pure;

/** What a session hands its application messages to: a NewOrderSingle or anything else it does not handle itself. */
public interface Application {
    /** An application message in sequence; answers go out through session.begin()/send(). */
    void onMessage(Session session, Header h, FieldIndex ix, long nowMs);
}
