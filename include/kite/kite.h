/* libkite's C API: a Kite acceptor (and initiator) started from a
 * kite-acceptor TOML file, with the application in the caller's language.
 *
 * Contract
 *  - Handles are opaque. Every call that can fail returns a kite_status;
 *    on failure, kite_last_error() holds one line saying why (thread-local:
 *    it is the text of the calling thread's last failed call).
 *  - No C++ type or exception crosses this boundary; callbacks must not
 *    unwind (no C++ exception, no longjmp) out of their own frame.
 *  - Strings are UTF-8. kite_str views are NOT NUL-terminated.
 *  - Only the kite_* symbols below are exported from libkite.so.
 *
 * Threads
 *  - The engine runs its own threads (docs/acceptor.md: kite-single,
 *    kite-mono, kite-pool-N and kite-front, kite-shard-N; kite-init-N for an
 *    initiator). Every callback but none of the start/stop calls is made on
 *    one of them. on_thread_start comes first on each thread, after it is
 *    named and pinned and before it touches a connection; on_thread_stop
 *    comes last, after its last connection's on_logout. A session's
 *    callbacks all come from the thread that owns its connection, never two
 *    at once; different sessions may be called concurrently (pool, shard).
 *  - Each function below states from where it may be called.
 *
 * Typical use
 *    kite_callbacks cb = {0};
 *    cb.size = sizeof cb;
 *    cb.on_message = my_on_message;      (answers with kite_session_send)
 *    kite_acceptor* a;
 *    if (kite_acceptor_start_file("kite.toml", &cb, &a) != KITE_OK)
 *      fprintf(stderr, "%s\n", kite_last_error());
 *    ...
 *    kite_acceptor_shutdown(a);          (Logout to every session, stop)
 *    kite_acceptor_free(a);
 */
#ifndef KITE_KITE_H
#define KITE_KITE_H

#include <stddef.h>
#include <stdint.h>

#if defined(KITE_BUILDING_LIBRARY)
#define KITE_API __attribute__((visibility("default")))
#else
#define KITE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- version and errors ---------------------------------------------- */

/* The version this header describes. kite_version_number() is the
 * library's: a program may refuse a library whose major differs. */
#define KITE_VERSION_MAJOR 0
#define KITE_VERSION_MINOR 1
#define KITE_VERSION_PATCH 0
#define KITE_VERSION_NUMBER (KITE_VERSION_MAJOR * 10000 + KITE_VERSION_MINOR * 100 + KITE_VERSION_PATCH)

/* "0.1.0 git=... compiler=..." (static string; any thread). */
KITE_API const char* kite_version(void);
/* major * 10000 + minor * 100 + patch (any thread). */
KITE_API int kite_version_number(void);

typedef enum kite_status {
  KITE_OK = 0,
  KITE_ERROR_ARGUMENT = 1,    /* a null handle or pointer, an index out of range */
  KITE_ERROR_CONFIG = 2,      /* the TOML file or string is wrong: the text names file, table and setting */
  KITE_ERROR_START = 3,       /* could not bind, pin or start a thread; or connect (initiator) */
  KITE_ERROR_UNSUPPORTED = 4, /* a transport or model this build or machine cannot run */
  KITE_ERROR_STATE = 5,       /* the call does not fit the handle's state (e.g. already stopped) */
  KITE_NOT_LOGGED_ON = 6,     /* send: the session is not logged on; nothing sent */
  KITE_BACK_PRESSURED = 7,    /* send: no room now (queue or buffer full); nothing sent, try again */
  KITE_TOO_LARGE = 8,         /* send: the message exceeds SendClaimBytes / the queue; nothing sent */
  KITE_STORED = 9             /* send from a callback: not sent now, stored under its MsgSeqNum, reaches
                                 the peer by resend (never lost) */
} kite_status;

/* The calling thread's last error text ("" when none). Valid until the
 * calling thread's next failing call; any thread. */
KITE_API const char* kite_last_error(void);
/* "ok", "config error", ... (static string). */
KITE_API const char* kite_status_name(kite_status s);

/* ---- handles and views ----------------------------------------------- */

typedef struct kite_acceptor kite_acceptor;
typedef struct kite_initiator kite_initiator;
/* One configured FIX session. Lives as long as its acceptor or initiator
 * (until kite_*_free); the same pointer across reconnects. */
typedef struct kite_session kite_session;

/* A byte view, not NUL-terminated. */
typedef struct kite_str {
  const char* data;
  size_t size;
} kite_str;

/* One field of a frame: the value is frame[offset, offset + length). */
typedef struct kite_field {
  uint32_t tag;
  uint32_t offset;
  uint32_t length;
} kite_field;

/* An inbound application message, borrowed: it and everything it points to
 * (frame, fields, header views) is valid during the callback only. */
typedef struct kite_message {
  const char* frame; /* the whole frame, "8=FIX.4.4|9=..|...|10=nnn|" */
  uint32_t frame_length;
  const kite_field* fields; /* every field in frame order, header and trailer included */
  uint32_t field_count;
  /* Header fields (empty views when absent). */
  kite_str begin_string;
  kite_str msg_type;
  kite_str sender_comp_id;
  kite_str target_comp_id;
  kite_str sending_time;
  uint64_t msg_seq_num;
  int poss_dup;    /* 43=Y */
  int poss_resend; /* 97=Y */
  /* UTC nanoseconds since the epoch: the session's one clock reading for
   * this message (its replies carry it as SendingTime). */
  int64_t time_ns;
} kite_message;

/* An engine thread as it reported itself after naming and pinning. */
typedef struct kite_thread_info {
  const char* name; /* "kite-single", "kite-pool-0", ... (valid during the callback) */
  int tid;          /* gettid() */
  int cpu;          /* the core it runs on after pinning */
  int pinned;       /* 1 when it was pinned to configured cores */
} kite_thread_info;

/* The application. Every pointer may be null (nothing is called). With
 * on_message null the acceptor answers as kite-acceptor does ([app] mode:
 * ack, match or echo). `user` is passed back unchanged. The struct is
 * copied by the start call. */
typedef struct kite_callbacks {
  size_t size; /* sizeof(kite_callbacks): lets later versions add members */
  void* user;
  void (*on_thread_start)(void* user, const kite_thread_info* thread);
  void (*on_thread_stop)(void* user, const kite_thread_info* thread);
  void (*on_logon)(void* user, kite_session* session);
  /* The session left the logged-on state; `reason` valid during the call. */
  void (*on_logout)(void* user, kite_session* session, const char* reason);
  /* An application message, in sequence, after the session's checks. The
   * reply goes out by kite_session_send() from inside this call. */
  void (*on_message)(void* user, kite_session* session, const kite_message* message);
} kite_callbacks;

/* ---- acceptor ---------------------------------------------------------- */

/* Starts an acceptor from a kite-acceptor file (docs/acceptor.md: [engine]
 * with model, transport, idle, cores...; [app]; [defaults]; [[session]]).
 * On KITE_OK *out is a running acceptor: listening, every thread started,
 * named, pinned and through on_thread_start. On failure *out is NULL.
 * `callbacks` may be NULL (kite-acceptor's behaviour). Any thread but an
 * engine thread. */
KITE_API kite_status kite_acceptor_start_file(const char* path, const kite_callbacks* callbacks, kite_acceptor** out);
/* The same from the file's text; `name` stands for the file in error texts
 * (NULL: "<string>"). */
KITE_API kite_status kite_acceptor_start_string(const char* toml, const char* name, const kite_callbacks* callbacks,
                                                kite_acceptor** out);
/* The listening port (the configured one, or the kernel's pick for port 0);
 * 0 for NULL. Any thread. */
KITE_API uint16_t kite_acceptor_port(const kite_acceptor* a);
/* Configured sessions, in file order. Any thread. */
KITE_API size_t kite_acceptor_session_count(const kite_acceptor* a);
/* The i-th configured session (NULL when out of range). Any thread. */
KITE_API kite_session* kite_acceptor_session(kite_acceptor* a, size_t i);
/* Sends a Logout to every logged-on session, waits up to [app]
 * shutdown_wait_ms for the connections to close, then stops. Any thread
 * but an engine thread; idempotent. */
KITE_API void kite_acceptor_shutdown(kite_acceptor* a);
/* Stops at once: joins every engine thread (open connections get
 * on_logout, then each thread on_thread_stop). Any thread but an engine
 * thread; idempotent. */
KITE_API void kite_acceptor_stop(kite_acceptor* a);
/* Stops (if running) and frees; every kite_session* of it dies. NULL is
 * fine. Any thread but an engine thread. */
KITE_API void kite_acceptor_free(kite_acceptor* a);

/* What a server thread's loop has done so far (counters, read at any time;
 * final after stop). */
typedef struct kite_thread_load {
  const char* name;     /* valid until kite_acceptor_free */
  uint64_t cycles;      /* passes of the loop */
  uint64_t idle_cycles; /* passes that did nothing */
  int64_t busy_ns;      /* time of the passes that did work */
  int64_t total_ns;     /* time of all passes */
} kite_thread_load;
/* Server threads that serve sessions (not the pool's front door). */
KITE_API size_t kite_acceptor_thread_count(const kite_acceptor* a);
KITE_API kite_status kite_acceptor_thread_load(const kite_acceptor* a, size_t i, kite_thread_load* out);

/* ---- initiator --------------------------------------------------------- */

/* Starts initiator sessions from a file in the same format: [[session]]
 * tables with ConnectionType = "initiator", SocketConnectHost and
 * SocketConnectPort (one host and port for all), and an optional [engine]
 * table read as kite-initiator reads it (docs/initiator.md: transport, idle,
 * cores, threads = how many kite-init-N threads, connect_timeout_ms,
 * send_buffer, recv_buffer); kite-initiator's [orders], [app] and [log] are
 * refused. A transport this build lacks is KITE_ERROR_UNSUPPORTED.
 * With transport = "tls" a [tls] table: ca_file or ca_dir (trust anchors),
 * server_name (checked and sent as SNI; default SocketConnectHost),
 * verify_peer and verify_host (default true), certificate and private_key
 * (a client certificate), min_version ("1.2" or "1.3"),
 * handshake_timeout_ms; see docs/acceptor.md "TLS" for the acceptor's.
 * Every session connects once, at start (no reconnect); the Logon follows
 * on its thread. Any thread but an engine thread. */
KITE_API kite_status kite_initiator_start_file(const char* path, const kite_callbacks* callbacks, kite_initiator** out);
KITE_API kite_status kite_initiator_start_string(const char* toml, const char* name, const kite_callbacks* callbacks,
                                                 kite_initiator** out);
KITE_API size_t kite_initiator_session_count(const kite_initiator* i);
KITE_API kite_session* kite_initiator_session(kite_initiator* i, size_t index);
/* Logout to every logged-on session, wait up to wait_ms for the
 * disconnects, then stop. Idempotent. */
KITE_API void kite_initiator_shutdown(kite_initiator* i, int wait_ms);
/* Joins every thread; idempotent. */
KITE_API void kite_initiator_stop(kite_initiator* i);
KITE_API void kite_initiator_free(kite_initiator* i);

/* ---- sessions ---------------------------------------------------------- */

/* Sends an application message: `msg_type` (35) and `body`, the fields
 * after the standard header as "tag=value\x01" bytes (the session writes
 * 8, 9, 35, 49, 56, 34, 52 before and 10 after).
 *  - From inside one of this session's callbacks (on its thread): written
 *    into the connection's send buffer now; when that cannot take it, it is
 *    stored under its MsgSeqNum for the peer's resend (KITE_STORED).
 *  - From any other thread: copied into the session's queue (bounded, 64
 *    KiB) and sent by the session's thread at its next timer turn: within
 *    the engine's timer interval (100 us) when the thread spins, up to the
 *    idle strategy's block timeout (1 ms) when it sleeps; sends keep their
 *    order. KITE_BACK_PRESSURED when the queue is full, and
 *    KITE_NOT_LOGGED_ON when the session is not logged on now (a queued
 *    message whose session logs out first is dropped).
 * `body` is read during the call only. */
KITE_API kite_status kite_session_send(kite_session* s, const char* msg_type, const char* body, size_t body_length);
/* Answers `message` with a BusinessMessageReject (35=j) with RefSeqNum,
 * RefMsgType and BusinessRejectReason = reason (3: unsupported message type)
 * and Text (may be NULL). From inside this session's on_message only. */
KITE_API kite_status kite_session_reject(kite_session* s, const kite_message* message, int reason, const char* text);
/* "FIX.4.4:KITE->BENCH0" (valid as long as the session). Any thread. */
KITE_API const char* kite_session_id(const kite_session* s);
/* The session's position in its file (0-based). Any thread. */
KITE_API size_t kite_session_index(const kite_session* s);
/* 1 while logged on (a snapshot when read from another thread). */
KITE_API int kite_session_logged_on(const kite_session* s);
/* The caller's pointer for this session (NULL until set). Any thread;
 * set it before the session can call back (e.g. right after start). */
KITE_API void kite_session_set_user(kite_session* s, void* user);
KITE_API void* kite_session_user(const kite_session* s);

#ifdef __cplusplus
}
#endif

#endif /* KITE_KITE_H */
