package kite;

import java.nio.ByteBuffer;

/** One engine thread's views and the calls native code makes on it (method IDs cached). */
final class Dispatcher {
    private final Bridge bridge;
    private final String threadName;
    private final Message message;
    private final Reply reply;

    Dispatcher(Bridge bridge, String threadName, ByteBuffer frame, ByteBuffer fields, ByteBuffer reply) {
        this.bridge = bridge;
        this.threadName = threadName;
        this.message = new Message(frame, fields);
        this.reply = new Reply(reply);
    }

    /** Larger buffers for a larger message (rare). */
    void rebind(ByteBuffer frame, ByteBuffer fields, ByteBuffer replyBuf) {
        message.rebind(frame, fields);
        reply.rebind(replyBuf);
    }

    /** Returns Reply.NONE, SEND or REJECT. */
    int onMessage(long session, int index, int frameLength, int fieldCount, long msgSeqNum, long timeNanos) {
        message.wrap(frameLength, fieldCount, msgSeqNum, timeNanos);
        reply.reset();
        try {
            bridge.app.onMessage(bridge.session(session, index), message, reply);
            return reply.finish();
        } catch (Throwable t) {
            bridge.report(t);
            return Reply.NONE;
        }
    }

    void onLogon(long session, int index) {
        try {
            bridge.app.onLogon(bridge.session(session, index));
        } catch (Throwable t) {
            bridge.report(t);
        }
    }

    void onLogout(long session, int index, String reason) {
        try {
            bridge.app.onLogout(bridge.session(session, index), reason);
        } catch (Throwable t) {
            bridge.report(t);
        }
    }

    void onThreadStop() {
        try {
            bridge.app.onThreadStop(threadName);
        } catch (Throwable t) {
            bridge.report(t);
        }
    }
}
