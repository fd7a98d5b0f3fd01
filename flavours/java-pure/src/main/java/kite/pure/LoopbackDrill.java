package kite.pure;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;

/**
 * A FIX client over loopback driven from the server's own thread: each step
 * writes a message, then runs the server's duty cycle until the answer is
 * back. The server warms its hot path with it before the ready file (the
 * JIT compiles the code the serving threads then run), and the tests count
 * its allocations. The client side allocates nothing per order either.
 */
public final class LoopbackDrill implements AutoCloseable {
    private static final long ANSWER_TIMEOUT_NS = 5_000_000_000L;
    private static final byte[] ACCOUNT = Ascii.bytes("BENCH-ACCOUNT-001");
    private static final byte[] SYMBOL = Ascii.bytes("KITE.XPAR");
    private static final byte[] SERVER = Ascii.bytes("KITE");
    private static final byte[] UNKNOWN_TYPE = Ascii.bytes("U1");

    private final Runnable pump;
    private final SocketChannel client;
    private final Encoder enc;
    private final ByteBuffer tx = ByteBuffer.allocateDirect(4096).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer rx = ByteBuffer.allocateDirect(64 * 1024).order(ByteOrder.LITTLE_ENDIAN);
    private final Framer framer = new Framer();
    private final FieldIndex ix = new FieldIndex();
    private final Header header = new Header();
    private final byte[] clOrdId = Ascii.bytes("C000000000000");
    private int rxEnd;
    private long seq = 1;
    private long clOrdIdNumber;
    private int lastSize;

    /** pump: one pass of the server's duty cycle, run while the drill waits. */
    public LoopbackDrill(Runnable pump, int port, String compId) throws IOException {
        this.pump = pump;
        client = SocketChannel.open();
        client.connect(new InetSocketAddress("127.0.0.1", port));
        client.configureBlocking(false);
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        enc = new Encoder(Ascii.bytes(compId));
        enc.target(SERVER, SERVER.length);
    }

    /** Size of the last answer. */
    public int lastAnswerSize() { return lastSize; }

    /** Logon (ResetSeqNumFlag=Y); returns the answer's MsgType. */
    public byte logon() throws IOException {
        seq = 1;
        enc.begin(tx, 0, tx.capacity(), (byte) 'A', seq++, System.currentTimeMillis())
           .putLong(Tag.EncryptMethod, 0).putLong(Tag.HeartBtInt, 30).putChar(Tag.ResetSeqNumFlag, 'Y');
        return exchange(enc.finish());
    }

    /** One NewOrderSingle; returns the answer's MsgType ('8' when acknowledged). */
    public byte order() throws IOException {
        sendOrder();
        return answer();
    }

    /** Sends one NewOrderSingle without waiting: several sessions' orders can then be in flight at once. */
    public void sendOrder() throws IOException {
        long n = ++clOrdIdNumber;
        for (int i = 12; i >= 1; i--) {
            clOrdId[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        final long now = System.currentTimeMillis();
        enc.begin(tx, 0, tx.capacity(), (byte) 'D', seq++, now)
           .putAscii(Tag.ClOrdID, clOrdId).putChar(Tag.HandlInst, '1').putAscii(Tag.Account, ACCOUNT)
           .putAscii(Tag.Symbol, SYMBOL).putChar(Tag.Side, '1').putTimestamp(Tag.TransactTime, now)
           .putLong(Tag.OrderQty, 100).putChar(Tag.OrdType, '2').putDecimal(Tag.Price, 10125, -2)
           .putChar(Tag.TimeInForce, '0');
        send(enc.finish());
    }

    /** n orders; returns how many were acknowledged with an ExecutionReport. */
    public int orders(int n) throws IOException {
        int acked = 0;
        for (int i = 0; i < n; i++) if (order() == '8') acked++;
        return acked;
    }

    /** Logout; returns the answer's MsgType. */
    public byte logout() throws IOException {
        enc.begin(tx, 0, tx.capacity(), (byte) '5', seq++, System.currentTimeMillis());
        return exchange(enc.finish());
    }

    /**
     * The session's other paths, as the lab's check plays them: a Heartbeat,
     * a TestRequest, a frame with a wrong CheckSum and a TestRequest under
     * its number, an unknown message type, a ResendRequest (answered with a
     * gap fill), a SequenceReset-GapFill to the expected number (rejected).
     * Returns the number of answers of the expected type (6).
     */
    public int sessionPaths() throws IOException {
        int ok = 0;
        long now = System.currentTimeMillis();
        enc.begin(tx, 0, tx.capacity(), (byte) '0', seq++, now);
        send(enc.finish());
        enc.begin(tx, 0, tx.capacity(), (byte) '1', seq++, now).putAscii(Tag.TestReqID, clOrdId);
        ok += exchange(enc.finish()) == '0' ? 1 : 0;
        enc.begin(tx, 0, tx.capacity(), (byte) '1', seq, now).putAscii(Tag.TestReqID, SYMBOL);
        final int n = enc.finish();
        tx.put(n - 2, (byte) (tx.get(n - 2) == '9' ? '0' : tx.get(n - 2) + 1));  // a wrong CheckSum: ignored
        send(n);
        enc.begin(tx, 0, tx.capacity(), (byte) '1', seq++, now).putAscii(Tag.TestReqID, SYMBOL);
        ok += exchange(enc.finish()) == '0' ? 1 : 0;
        enc.begin(tx, 0, tx.capacity(), UNKNOWN_TYPE, seq++, now).putAscii(Tag.Text, SYMBOL);
        ok += exchange(enc.finish()) == 'j' ? 1 : 0;
        enc.begin(tx, 0, tx.capacity(), (byte) '2', seq++, now).putLong(Tag.BeginSeqNo, 1).putLong(Tag.EndSeqNo, 0);
        ok += exchange(enc.finish()) == '4' ? 1 : 0;
        enc.begin(tx, 0, tx.capacity(), (byte) '4', seq, now).putChar(Tag.GapFillFlag, 'Y').putLong(Tag.NewSeqNo, seq);
        seq++;
        ok += exchange(enc.finish()) == '3' ? 1 : 0;
        enc.begin(tx, 0, tx.capacity(), (byte) 'D', seq++, now).putAscii(Tag.Symbol, SYMBOL);  // no ClOrdID: rejected
        ok += exchange(enc.finish()) == '3' ? 1 : 0;
        return ok;
    }

    /** A message numbered one past the expected: answered with a ResendRequest ('2'); the session stays in the gap. */
    public byte gap() throws IOException {
        seq++;
        return order();
    }

    /** A message numbered 1 again: answered with a Logout ('5'), then the server closes the connection. */
    public byte tooLow() throws IOException {
        seq = 1;
        return order();
    }

    private void send(int size) throws IOException {
        tx.limit(size).position(0);
        while (tx.hasRemaining()) {
            client.write(tx);
            pump();
        }
        tx.clear();
    }

    private byte exchange(int size) throws IOException {
        send(size);
        return answer();
    }

    /** Waits for the next message from the server; returns its MsgType. */
    public byte answer() throws IOException {
        final long deadline = System.nanoTime() + ANSWER_TIMEOUT_NS;
        while (System.nanoTime() < deadline) {
            pump();
            rx.limit(rx.capacity()).position(rxEnd);
            final int n = client.read(rx);
            if (n < 0) throw new IOException("the server closed the connection");
            rxEnd += n;
            if (framer.frame(rx, 0, rxEnd) != Framer.Status.COMPLETE) continue;
            lastSize = framer.size();
            final byte type = ix.build(rx, 0, lastSize) && header.read(ix) ? header.type() : 0;
            rx.limit(rxEnd).position(lastSize);
            rx.compact();
            rxEnd = rx.position();
            return type;
        }
        throw new IOException("no answer within 5 s");
    }

    private void pump() {
        pump.run();
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
