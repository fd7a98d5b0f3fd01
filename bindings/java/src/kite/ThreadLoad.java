package kite;

/** What a server thread's loop has done so far (kite_thread_load). */
public record ThreadLoad(String name, long cycles, long idleCycles, long busyNanos, long totalNanos) {}
