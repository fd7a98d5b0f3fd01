package kite.harness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.function.IntSupplier;

/**
 * What every Java flavour's server does for the lab (docs/flavours.md
 * "Process"): the ready file, the `server load:` line and the exit on
 * SIGTERM. Compiled into each flavour's jar (java-pure, java-jni).
 */
public final class Harness {
    private Harness() {}

    /** Writes the port and a newline to path, atomically (a temporary file renamed); nothing for "". */
    public static void writeReady(String path, int port) throws IOException {
        if (path.isEmpty()) return;
        final Path tmp = Path.of(path + ".tmp");
        Files.writeString(tmp, port + "\n");
        Files.move(tmp, Path.of(path), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /**
     * Writes and removes PATH.warm: the ready file's calls (a heap buffer
     * through the channel code the sockets use) would otherwise deoptimise
     * compiled code right after the ready file.
     */
    public static void rehearseReady(String path) throws IOException {
        if (path.isEmpty()) return;
        writeReady(path + ".warm", 0);
        Files.deleteIfExists(Path.of(path + ".warm"));
    }

    /** `server load: NAME polls=N empty=E% busy=B% busy/order=U us orders=K`. */
    public static String loadLine(String name, long polls, long empty, long busyNs, long totalNs, long orders) {
        return String.format(Locale.ROOT, "server load: %s polls=%d empty=%.1f%% busy=%.1f%% busy/order=%.2f us orders=%d",
                             name, polls, polls > 0 ? 100.0 * empty / polls : 0.0,
                             totalNs > 0 ? 100.0 * busyNs / totalNs : 0.0,
                             orders > 0 ? busyNs / 1000.0 / orders : 0.0, orders);
    }

    /**
     * SIGTERM and SIGINT run stop (Logouts, load lines) on the shutdown
     * hook, then end the JVM with code's value: the contract asks for 0
     * where the JVM would exit 143.
     */
    public static void onTerminate(Runnable stop, IntSupplier code) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.run();
            System.out.flush();
            System.err.flush();
            Runtime.getRuntime().halt(code.getAsInt());
        }, "kite-shutdown"));
    }
}
