package kite.pure;

import java.util.ArrayList;
import java.util.List;

/** The server's command line (docs/java-pure.md); bench-run passes the flavour file's args. */
public final class Options {
    public String model = "single";
    public String transport = "kernel";
    public String bind = "127.0.0.1";
    public int port;
    public int sessions = 1;
    public int workers = 1;
    public List<Integer> cores = new ArrayList<>();
    public int coordinatorCore = -1;
    public int busyPollUsecs;
    public String idle = "spin";
    public String store = "null";
    public String storeDir = "";
    public String readyFile = "";
    public double warmupS = 3.0;       // the warm-up's cap
    public int warmupOrders = 100_000;
    public boolean version;
    public boolean help;

    public static final String USAGE =
        "usage: kite-java-pure [--model single|mono|pool|shard] [--transport kernel] [--bind ADDR] [--port N]\n" +
        "                      [--sessions N] [--workers N] [--cores LIST] [--coordinator-core N]\n" +
        "                      [--busy-poll-usecs N] [--idle spin|yield|block] [--store null]\n" +
        "                      [--store-dir DIR] [--ready-file PATH] [--warmup-orders N] [--warmup SECONDS]\n" +
        "                      [--version]";

    /** Parses args; throws IllegalArgumentException with a message naming the option at fault. */
    public static Options parse(String[] args) {
        final Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            final String a = args[i];
            if (a.equals("--version")) {
                o.version = true;
                continue;
            }
            if (a.equals("--help") || a.equals("-h")) {
                o.help = true;
                continue;
            }
            if (i + 1 >= args.length) throw new IllegalArgumentException(a + " needs a value");
            final String v = args[++i];
            switch (a) {
                case "--model": o.model = oneOf(a, v, "single", "mono", "pool", "shard"); break;
                case "--transport": o.transport = v; break;
                case "--bind": o.bind = v; break;
                case "--port": o.port = integer(a, v, 0, 65535); break;
                case "--sessions": o.sessions = integer(a, v, 1, 100_000); break;
                case "--workers": o.workers = integer(a, v, 1, 1024); break;
                case "--cores": o.cores = coreList(v); break;
                case "--coordinator-core": o.coordinatorCore = integer(a, v, -1, 1023); break;
                case "--busy-poll-usecs": o.busyPollUsecs = integer(a, v, 0, 1_000_000); break;
                case "--idle": o.idle = oneOf(a, v, "spin", "yield", "block"); break;
                case "--store": o.store = oneOf(a, v, "null", "memory", "file"); break;
                case "--store-dir": o.storeDir = v; break;
                case "--ready-file": o.readyFile = v; break;
                case "--warmup": o.warmupS = decimal(a, v, 0, 10); break;
                case "--warmup-orders": o.warmupOrders = integer(a, v, 0, 10_000_000); break;
                default: throw new IllegalArgumentException("unknown option " + a);
            }
        }
        return o;
    }

    private static String oneOf(String option, String v, String... allowed) {
        for (String s : allowed) if (s.equals(v)) return v;
        throw new IllegalArgumentException(option + " " + v + ": expected one of " + String.join(", ", allowed));
    }

    private static int integer(String option, String v, int min, int max) {
        try {
            final int n = Integer.parseInt(v);
            if (n >= min && n <= max) return n;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(option + " " + v + ": expected an integer from " + min + " to " + max);
    }

    private static double decimal(String option, String v, double min, double max) {
        try {
            final double d = Double.parseDouble(v);
            if (d >= min && d <= max) return d;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(option + " " + v + ": expected seconds from " + min + " to " + max);
    }

    /** "9,10,11" (ranges "9-11" too). */
    static List<Integer> coreList(String v) {
        final List<Integer> out = new ArrayList<>();
        if (v.isBlank()) return out;
        for (String part : v.split(",")) {
            final String p = part.trim();
            final int dash = p.indexOf('-');
            if (dash > 0) {
                final int lo = integer("--cores", p.substring(0, dash), 0, 1023);
                final int hi = integer("--cores", p.substring(dash + 1), lo, 1023);
                for (int c = lo; c <= hi; c++) out.add(c);
            } else {
                out.add(integer("--cores", p, 0, 1023));
            }
        }
        return out;
    }
}
