package kite.pure;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import kite.harness.Harness;

/** kite-java-pure: the java-pure flavour's server (docs/java-pure.md). */
public final class Main {
    private Main() {}

    public static void main(String[] args) throws Exception {
        final Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("kite-java-pure: " + e.getMessage());
            System.err.println(Options.USAGE);
            System.exit(2);
            return;
        }
        if (o.version) {
            System.out.println(version());
            return;
        }
        if (o.help) {
            System.out.println(Options.USAGE);
            return;
        }
        final String unsupported = Server.unsupported(o);
        if (unsupported != null) {
            System.err.println("unsupported: " + unsupported);
            System.exit(Server.UNSUPPORTED);
            return;
        }
        // SIGTERM and SIGINT run the shutdown hooks: ours stops the server (Logouts, load
        // lines) and ends the JVM with the server's code, 0, instead of the JVM's 143.
        final CountDownLatch stop = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);
        final int[] code = {Server.FAILED};
        Harness.onTerminate(() -> {
            stop.countDown();
            try {
                done.await();
            } catch (InterruptedException ignored) {
                // halt anyway
            }
        }, () -> code[0]);
        try {
            code[0] = new Server(o).run(stop);
        } finally {
            done.countDown();
        }
        System.exit(code[0]);
    }

    static String version() {
        String git = "unknown";
        try (InputStream in = Main.class.getResourceAsStream("build.properties")) {
            if (in != null) {
                final Properties p = new Properties();
                p.load(in);
                git = p.getProperty("git", git);
            }
        } catch (IOException ignored) {
            // no stamp: "unknown"
        }
        return "kite-java-pure git=" + git + " java=" + System.getProperty("java.version") + " vm=\"" +
               System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version") + "\" gc=\"" +
               String.join(",", gcNames()) + "\"";
    }

    private static java.util.List<String> gcNames() {
        final java.util.List<String> names = new java.util.ArrayList<>();
        for (var b : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) names.add(b.getName());
        return names;
    }
}
