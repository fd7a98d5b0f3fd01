package kite.pure;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import jdk.incubator.foreign.CLinker;
import jdk.incubator.foreign.FunctionDescriptor;
import jdk.incubator.foreign.MemoryAccess;
import jdk.incubator.foreign.MemoryAddress;
import jdk.incubator.foreign.MemorySegment;
import jdk.incubator.foreign.ResourceScope;

/**
 * Pins the calling thread to one core with sched_setaffinity(2), called
 * through the JDK 17 foreign linker (jdk.incubator.foreign): no C code of
 * ours, no taskset process. Needs --add-modules jdk.incubator.foreign and
 * --enable-native-access=ALL-UNNAMED.
 */
public final class Affinity {
    private static final int MASK_BYTES = 128;  // 1024 cores

    private Affinity() {}

    private static final class Native {
        static final MethodHandle SCHED_SETAFFINITY = CLinker.getInstance().downcallHandle(
            CLinker.systemLookup().lookup("sched_setaffinity").orElseThrow(),
            MethodType.methodType(int.class, int.class, long.class, MemoryAddress.class),
            FunctionDescriptor.of(CLinker.C_INT, CLinker.C_INT, CLinker.C_LONG, CLinker.C_POINTER));
    }

    /** Loads the foreign linker and looks sched_setaffinity up (else done at the first pinning). */
    public static void load() {
        if (Native.SCHED_SETAFFINITY == null) throw new IllegalStateException("sched_setaffinity not found");
    }

    /** Pins the calling thread to `core`; throws with the reason when the kernel refuses. */
    public static void pinThisThread(int core) {
        if (setAffinity(0, List.of(core)) != 0)
            throw new IllegalStateException("sched_setaffinity refused core " + core +
                                            " (not a core of this machine, or not allowed to this process)");
        // Leave the core we were on now, so that the thread has run on its own core before anyone looks.
        Thread.yield();
    }

    /**
     * Confines every thread of this process whose name is not in `keep` (the
     * JVM's own: compiler, VM thread, main...) to `cores`, so that what the
     * runtime burns is charged to the server's cores. Threads it cannot set
     * (exited meanwhile) are skipped; returns how many were set.
     */
    public static int confineOtherThreads(Collection<Integer> cores, Set<String> keep) {
        int n = 0;
        try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : tasks) {
                final String comm;
                try {
                    comm = Files.readString(t.resolve("comm")).strip();
                } catch (IOException e) {
                    continue;
                }
                if (keep.contains(comm)) continue;
                if (setAffinity(Integer.parseInt(t.getFileName().toString()), cores) == 0) n++;
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list /proc/self/task: " + e.getMessage(), e);
        }
        return n;
    }

    private static int setAffinity(int tid, Collection<Integer> cores) {
        try (ResourceScope scope = ResourceScope.newConfinedScope()) {
            final MemorySegment mask = MemorySegment.allocateNative(MASK_BYTES, scope);
            for (int core : cores) {
                if (core < 0 || core >= MASK_BYTES * 8) throw new IllegalArgumentException("core " + core + " is out of range");
                final long word = MemoryAccess.getLongAtIndex(mask, core / 64);
                MemoryAccess.setLongAtIndex(mask, core / 64, word | 1L << (core % 64));
            }
            return (int) Native.SCHED_SETAFFINITY.invokeExact(tid, (long) MASK_BYTES, mask.address());
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity: " + t, t);
        }
    }
}
