package kite.pure;

import java.io.IOException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * The pool's front door: accepts (blocking, so it burns no core) and hands
 * each channel to the next worker whose queue has room, round robin; when
 * every queue is full it waits for room. Ends when its listener is closed.
 */
public final class FrontDoor implements Runnable {
    private final ServerSocketChannel listener;
    private final SpscQueue<SocketChannel>[] workers;
    private int next;

    public FrontDoor(ServerSocketChannel listener, SpscQueue<SocketChannel>[] workers) throws IOException {
        this.listener = listener;
        this.workers = workers;
        listener.configureBlocking(true);
    }

    @Override
    public void run() {
        while (listener.isOpen()) {
            final SocketChannel ch;
            try {
                ch = listener.accept();
            } catch (ClosedChannelException e) {  // closed by close(): stopping
                return;
            } catch (IOException e) {
                System.err.println("java-pure: front door: accept: " + e.getMessage());
                continue;
            }
            handOver(ch);
        }
    }

    private void handOver(SocketChannel ch) {
        while (listener.isOpen()) {
            for (int i = 0; i < workers.length; i++) {
                final int w = (next + i) % workers.length;
                if (workers[w].offer(ch)) {
                    next = (w + 1) % workers.length;
                    return;
                }
            }
            try {
                Thread.sleep(1);  // every worker's queue is full: wait for room
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Stops accepting. */
    public void close() {
        try {
            listener.close();
        } catch (IOException ignored) {
            // stopping
        }
    }
}
