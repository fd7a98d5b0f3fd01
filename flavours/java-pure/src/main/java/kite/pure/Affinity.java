package kite.pure;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
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

    /** Pins the calling thread to `core`; throws with the reason when the kernel refuses. */
    public static void pinThisThread(int core) {
        if (core < 0 || core >= MASK_BYTES * 8) throw new IllegalArgumentException("core " + core + " is out of range");
        final int rc;
        try (ResourceScope scope = ResourceScope.newConfinedScope()) {
            final MemorySegment mask = MemorySegment.allocateNative(MASK_BYTES, scope);
            MemoryAccess.setLongAtIndex(mask, core / 64, 1L << (core % 64));
            rc = (int) Native.SCHED_SETAFFINITY.invokeExact(0, (long) MASK_BYTES, mask.address());
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("sched_setaffinity: " + t, t);
        }
        if (rc != 0)
            throw new IllegalStateException("sched_setaffinity refused core " + core +
                                            " (not a core of this machine, or not allowed to this process)");
        // Leave the core we were on now, so that the thread has run on its own core before anyone looks.
        Thread.yield();
    }
}
