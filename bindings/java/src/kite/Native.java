package kite;

import java.io.File;
import java.nio.ByteBuffer;

/** The JNI entry points (bindings/java/native/kite_jni.c). */
final class Native {
    static {
        load();
    }

    private Native() {}

    // libkitejni.so: the kite.jni.library property, else beside kite.jar, else java.library.path.
    private static void load() {
        final String explicit = System.getProperty("kite.jni.library");
        if (explicit != null) {
            System.load(new File(explicit).getAbsolutePath());
            return;
        }
        try {
            final File jar = new File(Native.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            final File beside = new File(jar.getParentFile(), "libkitejni.so");
            if (beside.isFile()) {
                System.load(beside.getAbsolutePath());
                return;
            }
        } catch (Exception ignored) {
            // no code source (e.g. a custom class loader): fall back to the library path
        }
        System.loadLibrary("kitejni");
    }

    static native String version();

    static native int versionNumber();

    static native long acceptorStart(String text, String name, boolean isFile, Bridge bridge);

    static native int acceptorPort(long h);

    static native int acceptorSessionCount(long h);

    static native long acceptorSession(long h, int i);

    static native void acceptorShutdown(long h);

    static native void acceptorStop(long h);

    static native void acceptorFree(long h);

    static native int acceptorThreadCount(long h);

    /** Fills out[0..3] with cycles, idle cycles, busy ns, total ns; returns the thread's name. */
    static native String acceptorThreadLoad(long h, int i, long[] out);

    static native long initiatorStart(String text, String name, boolean isFile, Bridge bridge);

    static native int initiatorSessionCount(long h);

    static native long initiatorSession(long h, int i);

    static native void initiatorShutdown(long h, int waitMillis);

    static native void initiatorStop(long h);

    static native void initiatorFree(long h);

    static native int sessionSend(long s, byte[] msgType, ByteBuffer body, int length);

    static native String sessionId(long s);

    static native boolean sessionLoggedOn(long s);
}
