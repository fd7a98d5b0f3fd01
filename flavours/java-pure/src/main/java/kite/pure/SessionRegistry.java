package kite.pure;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The sessions the server accepts, SenderCompID PREFIX0..PREFIX<n-1>, and
 * which of them are logged on: a second Logon for a session that is logged
 * on is refused. Shared by every thread; lock-free, no allocation.
 */
public final class SessionRegistry {
    public static final int UNKNOWN = -1;
    public static final int TAKEN = -2;

    private final byte[] prefix;
    private final AtomicIntegerArray loggedOn;

    public SessionRegistry(String prefix, int sessions) {
        this.prefix = Ascii.bytes(prefix);
        this.loggedOn = new AtomicIntegerArray(sessions);
    }

    public int sessions() { return loggedOn.length(); }

    /** The session number of the CompID in b[at, at+length), or UNKNOWN. */
    public int lookup(ByteBuffer b, int at, int length) {
        final int n = prefix.length;
        if (at < 0 || length <= n || length > n + 9) return UNKNOWN;
        for (int i = 0; i < n; i++) if (b.get(at + i) != prefix[i]) return UNKNOWN;
        if (b.get(at + n) == '0' && length > n + 1) return UNKNOWN;  // no leading zeros
        final long k = Ascii.parseLong(b, at + n, length - n, -1);
        return k < 0 || k >= loggedOn.length() ? UNKNOWN : (int) k;
    }

    /** Marks session k logged on; false when it already is. */
    public boolean claim(int k) { return loggedOn.compareAndSet(k, 0, 1); }

    public void release(int k) { loggedOn.set(k, 0); }
}
