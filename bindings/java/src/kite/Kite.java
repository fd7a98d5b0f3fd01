package kite;

/** libkite's version and its Java binding's. */
public final class Kite {
    private Kite() {}

    /** libkite's version line ("0.1.0 git=... compiler=..."). */
    public static String version() {
        return Native.version();
    }

    /** major * 10000 + minor * 100 + patch of the loaded libkite. */
    public static int versionNumber() {
        return Native.versionNumber();
    }
}
