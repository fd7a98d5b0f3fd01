package kite;

/** A failed libkite call: the C API's status and its error text. */
public final class KiteException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** kite_status values (include/kite/kite.h). */
    public static final int ARGUMENT = 1, CONFIG = 2, START = 3, UNSUPPORTED = 4, STATE = 5;

    private final int status;

    public KiteException(int status, String message) {
        super(message);
        this.status = status;
    }

    /** The kite_status of the failed call. */
    public int status() {
        return status;
    }
}
