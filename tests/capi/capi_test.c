/* libkite's C API end to end, in C: an acceptor whose application is a C
 * callback answering each NewOrderSingle with an ExecutionReport, driven by
 * Kite's own initiator through the same API (orders sent from the main
 * thread, outside any callback). Then the API's error paths.
 *
 * Usage: kite_capi_test MODEL   (single, mono, pool or shard)
 * Exits 0 when every check passed; prints each failed check. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kite/kite.h"

static int failures = 0;
#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (!(cond)) {                                                    \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
      ++failures;                                                     \
    }                                                                 \
  } while (0)

enum { kOrders = 2000 };

typedef struct Counters {
  atomic_int thread_starts, thread_stops, logons, logouts, messages, bad, rejects_ok;
  char thread_name[32];
} Counters;

static Counters acc, ini;

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* The value of the first field `tag`, or an empty view. */
static kite_str field(const kite_message* m, uint32_t tag) {
  kite_str v = {NULL, 0};
  for (uint32_t i = 0; i < m->field_count; ++i) {
    if (m->fields[i].tag == tag) {
      v.data = m->frame + m->fields[i].offset;
      v.size = m->fields[i].length;
      return v;
    }
  }
  return v;
}

static int is(kite_str v, const char* s) { return v.size == strlen(s) && memcmp(v.data, s, v.size) == 0; }

static void on_thread_start(void* user, const kite_thread_info* t) {
  Counters* c = user;
  atomic_fetch_add(&c->thread_starts, 1);
  snprintf(c->thread_name, sizeof c->thread_name, "%s", t->name);
}
static void on_thread_stop(void* user, const kite_thread_info* t) {
  (void)t;
  atomic_fetch_add(&((Counters*)user)->thread_stops, 1);
}
static void on_logon(void* user, kite_session* s) {
  (void)s;
  atomic_fetch_add(&((Counters*)user)->logons, 1);
}
static void on_logout(void* user, kite_session* s, const char* reason) {
  (void)s;
  (void)reason;
  atomic_fetch_add(&((Counters*)user)->logouts, 1);
}

/* The acceptor's application: ExecutionReport New for a NewOrderSingle,
 * BusinessMessageReject for anything else. */
static void acceptor_on_message(void* user, kite_session* s, const kite_message* m) {
  Counters* c = user;
  atomic_fetch_add(&c->messages, 1);
  if (!is(m->msg_type, "D")) {
    if (kite_session_reject(s, m, 3, "unsupported message type") == KITE_OK) atomic_fetch_add(&c->rejects_ok, 1);
    return;
  }
  const kite_str cl = field(m, 11), sym = field(m, 55);
  if (cl.size == 0 || !is(m->sender_comp_id, "BENCH0") || m->msg_seq_num == 0 || m->time_ns <= 0) {
    atomic_fetch_add(&c->bad, 1);
    return;
  }
  char body[256];
  const int n =
      snprintf(body, sizeof body,
               "37=O%llu\00111=%.*s\00117=E%llu\001150=0\00139=0\00155=%.*s\00154=1\001151=100\00114=0\0016=0\001",
               (unsigned long long)m->msg_seq_num, (int)cl.size, cl.data, (unsigned long long)m->msg_seq_num,
               (int)sym.size, sym.data);
  const kite_status st = kite_session_send(s, "8", body, (size_t)n);
  if (st != KITE_OK) atomic_fetch_add(&c->bad, 1);
}

/* The initiator's: counts ExecutionReports whose ClOrdID is the expected one. */
static atomic_int next_report;
static void initiator_on_message(void* user, kite_session* s, const kite_message* m) {
  (void)s;
  Counters* c = user;
  if (is(m->msg_type, "j")) {
    atomic_fetch_add(&c->rejects_ok, 1);
    return;
  }
  char want[32];
  snprintf(want, sizeof want, "C%012d", atomic_load(&next_report));
  if (!is(m->msg_type, "8") || !is(field(m, 11), want) || !is(field(m, 150), "0")) {
    atomic_fetch_add(&c->bad, 1);
  } else {
    atomic_fetch_add(&next_report, 1);
  }
  atomic_fetch_add(&c->messages, 1);
}

static int wait_for(atomic_int* v, int want, int timeout_ms) {
  for (int waited = 0; atomic_load(v) < want && waited < timeout_ms; waited += 2) sleep_ms(2);
  return atomic_load(v) >= want;
}

static void run_session(const char* model) {
  char cfg[1024];
  snprintf(cfg, sizeof cfg,
           "[engine]\nmodel = \"%s\"\nport = 0\nidle = \"block\"\nworkers = 1\n"
           "[defaults]\nBeginString = \"FIX.4.4\"\nSenderCompID = \"KITE\"\nResetOnLogon = true\n"
           "StoreKind = \"memory\"\nUseDataDictionary = false\n"
           "[[session]]\nTargetCompID = \"BENCH0\"\n",
           model);
  kite_callbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.user = &acc;
  cb.on_thread_start = on_thread_start;
  cb.on_thread_stop = on_thread_stop;
  cb.on_logon = on_logon;
  cb.on_logout = on_logout;
  cb.on_message = acceptor_on_message;
  kite_acceptor* a = NULL;
  kite_status st = kite_acceptor_start_string(cfg, "capi_test.toml", &cb, &a);
  CHECK(st == KITE_OK, "acceptor start: %s", kite_last_error());
  if (st != KITE_OK) return;
  CHECK(atomic_load(&acc.thread_starts) >= 1, "no on_thread_start before start returned");
  CHECK(strncmp(acc.thread_name, "kite-", 5) == 0, "thread name %s", acc.thread_name);
  const uint16_t port = kite_acceptor_port(a);
  CHECK(port != 0, "port 0");
  CHECK(kite_acceptor_session_count(a) == 1, "sessions %zu", kite_acceptor_session_count(a));
  CHECK(strcmp(kite_session_id(kite_acceptor_session(a, 0)), "FIX.4.4:KITE->BENCH0") == 0, "id %s",
        kite_session_id(kite_acceptor_session(a, 0)));
  CHECK(kite_acceptor_session(a, 1) == NULL, "session 1 exists");

  snprintf(cfg, sizeof cfg,
           "[engine]\nidle = \"block\"\n"
           "[defaults]\nBeginString = \"FIX.4.4\"\nConnectionType = \"initiator\"\nSenderCompID = \"BENCH0\"\n"
           "TargetCompID = \"KITE\"\nResetOnLogon = true\nStoreKind = \"memory\"\nUseDataDictionary = false\n"
           "SocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = %u\n[[session]]\n",
           (unsigned)port);
  kite_callbacks icb = cb;
  icb.user = &ini;
  icb.on_message = initiator_on_message;
  kite_initiator* in = NULL;
  st = kite_initiator_start_string(cfg, "capi_initiator.toml", &icb, &in);
  CHECK(st == KITE_OK, "initiator start: %s", kite_last_error());
  if (st != KITE_OK) {
    kite_acceptor_free(a);
    return;
  }
  kite_session* s = kite_initiator_session(in, 0);
  CHECK(wait_for(&ini.logons, 1, 10000), "initiator never logged on");
  CHECK(wait_for(&acc.logons, 1, 10000), "acceptor never saw the logon");
  CHECK(kite_session_logged_on(s) == 1, "not logged on");

  /* Orders from this thread: queued, sent by the session's thread. */
  for (int i = 0; i < kOrders; ++i) {
    char body[256];
    const int n = snprintf(
        body, sizeof body,
        "11=C%012d\00121=1\00155=KITE.XPAR\00154=1\00160=20261201-10:00:00.000\00138=100\00140=2\00144=101.25\001", i);
    for (;;) {
      st = kite_session_send(s, "D", body, (size_t)n);
      if (st != KITE_BACK_PRESSURED) break;
      sleep_ms(1);
    }
    CHECK(st == KITE_OK, "send %d: %s %s", i, kite_status_name(st), kite_last_error());
    if (st != KITE_OK) break;
  }
  CHECK(wait_for(&ini.messages, kOrders, 20000), "reports %d of %d", atomic_load(&ini.messages), kOrders);
  CHECK(atomic_load(&ini.bad) == 0, "%d reports out of order or wrong", atomic_load(&ini.bad));
  CHECK(atomic_load(&acc.bad) == 0, "%d orders the acceptor found wrong", atomic_load(&acc.bad));

  /* An unsupported type: the acceptor rejects it from inside its callback. */
  st = kite_session_send(s, "U1", "58=hello\001", 9);
  CHECK(st == KITE_OK, "send U1: %s", kite_last_error());
  CHECK(wait_for(&ini.rejects_ok, 1, 10000), "no BusinessMessageReject");
  CHECK(atomic_load(&acc.rejects_ok) == 1, "acceptor's reject %d", atomic_load(&acc.rejects_ok));

  /* Outside a callback, the reply-only call is refused. */
  kite_message fake;
  memset(&fake, 0, sizeof fake);
  st = kite_session_reject(kite_acceptor_session(a, 0), &fake, 3, NULL);
  CHECK(st == KITE_ERROR_STATE && strstr(kite_last_error(), "on_message") != NULL, "reject outside: %s",
        kite_last_error());

  kite_initiator_shutdown(in, 5000);
  kite_acceptor_shutdown(a);
  CHECK(atomic_load(&ini.logouts) == 1, "initiator logouts %d", atomic_load(&ini.logouts));
  CHECK(atomic_load(&acc.logouts) == 1, "acceptor logouts %d", atomic_load(&acc.logouts));
  kite_initiator_free(in);
  CHECK(kite_acceptor_thread_count(a) >= 1, "no server thread");
  kite_thread_load load;
  CHECK(kite_acceptor_thread_load(a, 0, &load) == KITE_OK && load.cycles > 0, "thread load");
  CHECK(kite_acceptor_thread_load(a, 99, &load) == KITE_ERROR_ARGUMENT, "thread 99");
  kite_acceptor_free(a);
  CHECK(atomic_load(&acc.thread_stops) == atomic_load(&acc.thread_starts), "acceptor threads %d started, %d stopped",
        atomic_load(&acc.thread_starts), atomic_load(&acc.thread_stops));
  CHECK(atomic_load(&ini.thread_stops) == atomic_load(&ini.thread_starts), "initiator threads %d started, %d stopped",
        atomic_load(&ini.thread_starts), atomic_load(&ini.thread_stops));
}

static void errors(void) {
  kite_acceptor* a = (kite_acceptor*)&a;
  kite_status st = kite_acceptor_start_string(
      "[engine]\nmodel = \"triple\"\nport = "
      "0\n[[session]]\nBeginString=\"FIX.4.4\"\nSenderCompID=\"A\"\nTargetCompID=\"B\"\n",
      "bad.toml", NULL, &a);
  CHECK(st == KITE_ERROR_CONFIG && a == NULL, "bad model: %s", kite_status_name(st));
  CHECK(strstr(kite_last_error(), "bad.toml") != NULL && strstr(kite_last_error(), "model") != NULL, "text: %s",
        kite_last_error());
  st = kite_acceptor_start_string("[engine]\ntransport = \"tcpdirect\"\nmodel = \"pool\"\nport = 0\n", "t.toml", NULL,
                                  &a);
  CHECK(st == KITE_ERROR_UNSUPPORTED && strncmp(kite_last_error(), "unsupported:", 12) == 0, "unsupported: %s %s",
        kite_status_name(st), kite_last_error());
  st = kite_acceptor_start_file("/nonexistent/kite.toml", NULL, &a);
  CHECK(st == KITE_ERROR_CONFIG && strstr(kite_last_error(), "cannot open") != NULL, "missing file: %s",
        kite_last_error());
  st = kite_acceptor_start_string("[engine\n", "broken.toml", NULL, &a);
  CHECK(st == KITE_ERROR_CONFIG && strstr(kite_last_error(), "broken.toml") != NULL, "broken: %s", kite_last_error());
  st = kite_acceptor_start_string(NULL, NULL, NULL, &a);
  CHECK(st == KITE_ERROR_ARGUMENT, "null text");
  kite_initiator* in = NULL;
  st = kite_initiator_start_string("[[session]]\nBeginString=\"FIX.4.4\"\nSenderCompID=\"A\"\nTargetCompID=\"B\"\n",
                                   "i.toml", NULL, &in);
  CHECK(st == KITE_ERROR_CONFIG && strstr(kite_last_error(), "ConnectionType") != NULL, "initiator role: %s",
        kite_last_error());
  CHECK(kite_session_send(NULL, "D", "", 0) == KITE_ERROR_ARGUMENT, "send NULL");
  CHECK(kite_version_number() == KITE_VERSION_NUMBER, "version %d", kite_version_number());
  CHECK(strncmp(kite_version(), "0.1.0", 5) == 0, "version text %s", kite_version());
  kite_acceptor_free(NULL);
  kite_initiator_free(NULL);
}

int main(int argc, char** argv) {
  const char* model = argc > 1 ? argv[1] : "mono";
  errors();
  run_session(model);
  if (failures != 0) {
    fprintf(stderr, "kite_capi_test %s: %d check(s) failed\n", model, failures);
    return 1;
  }
  printf("kite_capi_test %s: ok\n", model);
  return 0;
}
