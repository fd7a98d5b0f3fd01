package kite.pure;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.List;
import java.util.Locale;

/**
 * The garbage collections the JVM ran since mark() (the ready file): one
 * line at exit, `gc since ready: collections=N pause=T ms (NAME=n ...)
 * heap=U/M MiB`, so that every cell's server log says whether a collection
 * fell inside it.
 */
public final class GcReport {
    private final List<GarbageCollectorMXBean> beans = ManagementFactory.getGarbageCollectorMXBeans();
    private final long[] counts = new long[beans.size()];
    private final long[] times = new long[beans.size()];

    public void mark() {
        for (int i = 0; i < beans.size(); i++) {
            counts[i] = beans.get(i).getCollectionCount();
            times[i] = beans.get(i).getCollectionTime();
        }
    }

    public long collectionsSinceMark() {
        long n = 0;
        for (int i = 0; i < beans.size(); i++) n += beans.get(i).getCollectionCount() - counts[i];
        return n;
    }

    public String line() {
        long n = 0, ms = 0;
        final StringBuilder each = new StringBuilder();
        for (int i = 0; i < beans.size(); i++) {
            final GarbageCollectorMXBean b = beans.get(i);
            final long c = b.getCollectionCount() - counts[i];
            n += c;
            ms += b.getCollectionTime() - times[i];
            each.append(each.length() == 0 ? "" : " ").append(b.getName().replace(' ', '_')).append('=').append(c);
        }
        final MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return String.format(Locale.ROOT, "gc since ready: collections=%d pause=%d ms (%s) heap=%.1f/%.1f MiB", n, ms, each,
                             heap.getUsed() / 1048576.0, heap.getMax() / 1048576.0);
    }
}
