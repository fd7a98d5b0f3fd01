// libkite's C API over app::Acceptor (the kite-acceptor code path) and the
// engine's Initiator. Every entry point catches everything: no exception
// leaves the library.
#include "kite/kite.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "kite/app/initiator.hpp"
#include "kite/app/initiator_daemon.hpp"
#include "kite/app/tls_config.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/header.hpp"
#include "kite/engine/engine.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/log.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"
#include "kite/transport/transport.hpp"
#include "kite/util/config_error.hpp"

static_assert(sizeof(kite_field) == sizeof(kite::codec::FieldRef));
static_assert(offsetof(kite_field, tag) == offsetof(kite::codec::FieldRef, tag));
static_assert(offsetof(kite_field, offset) == offsetof(kite::codec::FieldRef, offset));
static_assert(offsetof(kite_field, length) == offsetof(kite::codec::FieldRef, length));

namespace {

using namespace kite;

thread_local std::string t_error;

kite_status fail(kite_status s, std::string text) {
  try {
    t_error = std::move(text);
  } catch (...) {
    t_error.clear();
  }
  return s;
}

kite_status fail_current(kite_status s) {
  try {
    throw;
  } catch (const std::exception& e) {
    return fail(s, e.what());
  } catch (...) {
    return fail(s, "unknown error");
  }
}

kite_str view(std::string_view v) noexcept { return {v.data(), v.size()}; }

kite_callbacks copy_callbacks(const kite_callbacks* cb) noexcept {
  kite_callbacks c{};
  if (cb != nullptr) std::memcpy(&c, cb, std::min(cb->size, sizeof c));
  c.size = sizeof c;
  return c;
}

// The session whose callback is running on this thread: kite_session_send
// from it writes at once, from anywhere else it queues.
thread_local kite_session* t_current = nullptr;

struct CurrentScope {
  kite_session* saved;
  explicit CurrentScope(kite_session* s) noexcept : saved(t_current) { t_current = s; }
  ~CurrentScope() { t_current = saved; }
};

}  // namespace

// Room per session for messages sent from outside its callbacks (kite.h: 64 KiB).
constexpr std::size_t kQueueBytes = 64 * 1024;

struct kite_session {
  session::Session* session = nullptr;  // set once the registry made it
  std::size_t index = 0;
  const kite_callbacks* callbacks = nullptr;
  std::atomic<void*> user{nullptr};
  std::atomic<bool> logged_on{false};
  // Whose command port a send from another thread is posted to (one is set).
  app::Acceptor* acceptor = nullptr;
  app::InitiatorHost* host = nullptr;
  void attach(session::Session& s, app::Acceptor* a, app::InitiatorHost* h) noexcept {
    session = &s;
    acceptor = a;
    host = h;
  }
  // A send from another thread, queued for the session's thread.
  kite_status post(std::string_view type, std::string_view body) noexcept {
    link::Command c;
    c.kind = link::Command::Kind::send;
    c.msg_type = type;
    c.text = body;
    switch (acceptor != nullptr ? acceptor->post(index, c) : host->post(index, c)) {
      case link::PortStatus::ok: return KITE_OK;
      case link::PortStatus::full: return KITE_BACK_PRESSURED;
      case link::PortStatus::too_large: break;
    }
    return KITE_TOO_LARGE;
  }
};

namespace {

// The Application of one session: calls the C callbacks, and `builtin`
// (kite-acceptor's OrderApplication) for the messages when there is no
// on_message.
class CallbackApp final : public session::Application {
 public:
  CallbackApp(kite_session& s, session::Application* builtin = nullptr) noexcept : s_(s), builtin_(builtin) {}
  void set_builtin(session::Application* b) noexcept { builtin_ = b; }

  void on_logon(session::Session& s) noexcept override {
    s_.logged_on.store(true, std::memory_order_release);
    if (builtin_ != nullptr) builtin_->on_logon(s);
    const kite_callbacks& cb = *s_.callbacks;
    if (cb.on_logon == nullptr) return;
    CurrentScope scope(&s_);
    cb.on_logon(cb.user, &s_);
  }
  void on_logout(session::Session& s, const char* reason) noexcept override {
    s_.logged_on.store(false, std::memory_order_release);
    if (builtin_ != nullptr) builtin_->on_logout(s, reason);
    const kite_callbacks& cb = *s_.callbacks;
    if (cb.on_logout == nullptr) return;
    CurrentScope scope(&s_);
    cb.on_logout(cb.user, &s_, reason != nullptr ? reason : "");
  }
  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    const kite_callbacks& cb = *s_.callbacks;
    if (cb.on_message == nullptr) {
      if (builtin_ != nullptr) builtin_->on_message(s, h, ix);
      return;
    }
    const std::string_view frame = ix.frame();
    kite_message m;
    m.frame = frame.data();
    m.frame_length = static_cast<std::uint32_t>(frame.size());
    m.fields = reinterpret_cast<const kite_field*>(ix.begin());
    m.field_count = ix.size();
    m.begin_string = view(h.begin_string);
    m.msg_type = view(h.msg_type);
    m.sender_comp_id = view(h.sender_comp_id);
    m.target_comp_id = view(h.target_comp_id);
    m.sending_time = view(h.sending_time);
    m.msg_seq_num = h.msg_seq_num;
    m.poss_dup = h.poss_dup ? 1 : 0;
    m.poss_resend = h.poss_resend ? 1 : 0;
    m.time_ns = s.time_ns();
    CurrentScope scope(&s_);
    cb.on_message(cb.user, &s_, &m);
  }

 private:
  kite_session& s_;
  session::Application* builtin_;
};

// Engine threads' start and end to the C callbacks.
class ThreadCalls final : public engine::ThreadHooks {
 public:
  explicit ThreadCalls(const kite_callbacks& cb) noexcept : cb_(cb) {}
  void on_thread_start(const engine::ThreadInfo& t) noexcept override { call(cb_.on_thread_start, t); }
  void on_thread_stop(const engine::ThreadInfo& t) noexcept override { call(cb_.on_thread_stop, t); }

 private:
  void call(void (*fn)(void*, const kite_thread_info*), const engine::ThreadInfo& t) noexcept {
    if (fn == nullptr) return;
    const kite_thread_info info{t.name.c_str(), t.tid, t.cpu, t.cores.empty() ? 0 : 1};
    fn(cb_.user, &info);
  }
  const kite_callbacks& cb_;
};

// A file's error as the C API reports it: a pair of transport and model this
// build cannot run is KITE_ERROR_UNSUPPORTED, its text "unsupported: " and
// the reader's message (docs/bindings.md); any other KITE_ERROR_CONFIG.
kite_status fail_config() {
  try {
    throw;
  } catch (const util::Unsupported& e) {
    return fail(KITE_ERROR_UNSUPPORTED, std::string("unsupported: ") + e.what());
  } catch (...) {
    return fail_current(KITE_ERROR_CONFIG);
  }
}

std::string read_text(const char* path, bool& ok) {
  ok = false;
  std::FILE* f = std::fopen(path, "rb");
  if (f == nullptr) return std::string(path) + ": cannot open: " + std::strerror(errno);
  std::string text;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad) return std::string(path) + ": read error";
  ok = true;
  return text;
}

}  // namespace

// --- acceptor ------------------------------------------------------------------

struct kite_acceptor final : app::AcceptorHooks {
  kite_callbacks callbacks{};
  session::StderrLogger log;
  std::unique_ptr<ThreadCalls> thread_calls;
  std::vector<std::unique_ptr<kite_session>> sessions;
  std::vector<std::unique_ptr<CallbackApp>> apps;
  std::unique_ptr<app::Acceptor> acceptor;
  std::vector<std::string> load_names;

  session::Application* application(std::size_t i, const session::SessionSettings&,
                                    app::OrderApplication& builtin) override {
    apps[i]->set_builtin(&builtin);
    return apps[i].get();
  }
};

namespace {

kite_status start_acceptor(const std::string& text, const std::string& name, const kite_callbacks* cb,
                           kite_acceptor** out) {
  if (out == nullptr) return fail(KITE_ERROR_ARGUMENT, "kite_acceptor_start: out is NULL");
  *out = nullptr;
  auto a = std::make_unique<kite_acceptor>();
  a->callbacks = copy_callbacks(cb);
  app::AcceptorConfig config;
  try {
    config = app::parse_acceptor_config(text, name);
  } catch (...) {
    return fail_config();
  }
  try {
    a->thread_calls = std::make_unique<ThreadCalls>(a->callbacks);
    config.engine.thread_hooks = a->thread_calls.get();
    const std::size_t n = config.sessions.sessions.size();
    for (std::size_t i = 0; i < n; ++i) {
      a->sessions.push_back(std::make_unique<kite_session>());
      a->sessions.back()->index = i;
      a->sessions.back()->callbacks = &a->callbacks;
      a->apps.push_back(std::make_unique<CallbackApp>(*a->sessions.back()));
    }
    config.queue_bytes = kQueueBytes;
    a->acceptor = std::make_unique<app::Acceptor>(std::move(config), a->log, a.get());
    for (std::size_t i = 0; i < n; ++i)
      a->sessions[i]->attach(a->acceptor->registry().at(i), a->acceptor.get(), nullptr);
  } catch (...) {
    return fail_current(KITE_ERROR_CONFIG);
  }
  std::string error;
  if (!a->acceptor->start(error)) return fail(KITE_ERROR_START, name + ": " + error);
  for (const engine::ThreadInfo& t : a->acceptor->engine_threads())
    if (t.name != "kite-front") a->load_names.push_back(t.name);
  *out = a.release();
  return KITE_OK;
}

}  // namespace

// --- initiator -----------------------------------------------------------------

// The C API's initiator: the sessions kept connected by app::InitiatorHost
// (reconnect back-off, schedules).
struct kite_initiator final : app::InitiatorHooks {
  kite_callbacks callbacks{};
  session::StderrLogger log;
  app::LoggerEvents events{log};
  std::unique_ptr<ThreadCalls> thread_calls;
  std::vector<std::unique_ptr<kite_session>> sessions;
  std::vector<std::unique_ptr<CallbackApp>> apps;
  std::unique_ptr<app::InitiatorHost> host;

  session::Application& application(std::size_t i, const session::SessionSettings&) override {
    sessions.push_back(std::make_unique<kite_session>());
    sessions.back()->index = i;
    sessions.back()->callbacks = &callbacks;
    apps.push_back(std::make_unique<CallbackApp>(*sessions.back()));
    return *apps.back();
  }
};

namespace {

kite_status start_initiator(const std::string& text, const std::string& name, const kite_callbacks* cb,
                            kite_initiator** out) {
  if (out == nullptr) return fail(KITE_ERROR_ARGUMENT, "kite_initiator_start: out is NULL");
  *out = nullptr;
  auto in = std::make_unique<kite_initiator>();
  in->callbacks = copy_callbacks(cb);
  app::InitiatorDaemonConfig config;
  try {
    config = app::parse_library_initiator_config(text, name);
  } catch (...) {
    return fail_config();
  }
  try {
    in->thread_calls = std::make_unique<ThreadCalls>(in->callbacks);
    config.engine.thread_hooks = in->thread_calls.get();
    config.engine.events = &in->events;
    in->host = std::make_unique<app::InitiatorHost>(config.sessions, config.engine, in->log, *in, kQueueBytes);
    for (std::size_t i = 0; i < in->sessions.size(); ++i)
      in->sessions[i]->attach(in->host->session(i), nullptr, in->host.get());
  } catch (...) {
    return fail_current(KITE_ERROR_CONFIG);
  }
  // Every session connected once before this returns (a refused first
  // connect is the caller's error); later disconnects reconnect with back-off.
  std::string error;
  if (!in->host->start(true, error)) return fail(KITE_ERROR_START, name + ": " + error);
  *out = in.release();
  return KITE_OK;
}

template <class Start, class Handle>
kite_status start_from_file(const char* path, const kite_callbacks* cb, Handle** out, Start start) {
  if (out != nullptr) *out = nullptr;
  if (path == nullptr) return fail(KITE_ERROR_ARGUMENT, "path is NULL");
  bool ok = false;
  std::string text = read_text(path, ok);
  if (!ok) return fail(KITE_ERROR_CONFIG, text);
  return start(text, std::string(path), cb, out);
}

}  // namespace

// --- the exported functions ------------------------------------------------------

#ifndef KITE_GIT_STR
#define KITE_GIT_STR ""
#endif
#ifndef KITE_COMPILER_STR
#define KITE_COMPILER_STR ""
#endif

extern "C" {

const char* kite_version(void) { return "0.1.0 git=" KITE_GIT_STR " compiler=\"" KITE_COMPILER_STR "\""; }

int kite_version_number(void) { return KITE_VERSION_NUMBER; }

const char* kite_last_error(void) { return t_error.c_str(); }

const char* kite_status_name(kite_status s) {
  switch (s) {
    case KITE_OK: return "ok";
    case KITE_ERROR_ARGUMENT: return "bad argument";
    case KITE_ERROR_CONFIG: return "configuration error";
    case KITE_ERROR_START: return "start failed";
    case KITE_ERROR_UNSUPPORTED: return "unsupported";
    case KITE_ERROR_STATE: return "wrong state";
    case KITE_NOT_LOGGED_ON: return "not logged on";
    case KITE_BACK_PRESSURED: return "back-pressured";
    case KITE_TOO_LARGE: return "too large";
    case KITE_STORED: return "stored for resend";
  }
  return "unknown status";
}

kite_status kite_acceptor_start_file(const char* path, const kite_callbacks* callbacks, kite_acceptor** out) {
  try {
    return start_from_file(path, callbacks, out, start_acceptor);
  } catch (...) {
    return fail_current(KITE_ERROR_START);
  }
}

kite_status kite_acceptor_start_string(const char* toml_text, const char* name, const kite_callbacks* callbacks,
                                       kite_acceptor** out) {
  try {
    if (toml_text == nullptr) {
      if (out != nullptr) *out = nullptr;
      return fail(KITE_ERROR_ARGUMENT, "kite_acceptor_start_string: toml is NULL");
    }
    return start_acceptor(toml_text, name != nullptr ? name : "<string>", callbacks, out);
  } catch (...) {
    return fail_current(KITE_ERROR_START);
  }
}

uint16_t kite_acceptor_port(const kite_acceptor* a) { return a != nullptr ? a->acceptor->port() : 0; }

size_t kite_acceptor_session_count(const kite_acceptor* a) { return a != nullptr ? a->sessions.size() : 0; }

kite_session* kite_acceptor_session(kite_acceptor* a, size_t i) {
  return a != nullptr && i < a->sessions.size() ? a->sessions[i].get() : nullptr;
}

void kite_acceptor_shutdown(kite_acceptor* a) {
  if (a != nullptr) a->acceptor->shutdown();
}

void kite_acceptor_stop(kite_acceptor* a) {
  if (a != nullptr) a->acceptor->stop();
}

void kite_acceptor_free(kite_acceptor* a) {
  if (a == nullptr) return;
  a->acceptor->stop();
  delete a;
}

size_t kite_acceptor_thread_count(const kite_acceptor* a) { return a != nullptr ? a->load_names.size() : 0; }

kite_status kite_acceptor_thread_load(const kite_acceptor* a, size_t i, kite_thread_load* out) {
  if (a == nullptr || out == nullptr) return fail(KITE_ERROR_ARGUMENT, "kite_acceptor_thread_load: NULL argument");
  try {
    const engine::EngineStats st = a->acceptor->engine_stats();
    if (i >= a->load_names.size() || i >= st.per_thread_load.size())
      return fail(KITE_ERROR_ARGUMENT, "kite_acceptor_thread_load: thread " + std::to_string(i) + " out of range");
    const engine::AgentLoad& l = st.per_thread_load[i];
    *out = {a->load_names[i].c_str(), l.cycles, l.idle_cycles, l.busy_ns, l.total_ns};
    return KITE_OK;
  } catch (...) {
    return fail_current(KITE_ERROR_STATE);
  }
}

kite_status kite_initiator_start_file(const char* path, const kite_callbacks* callbacks, kite_initiator** out) {
  try {
    return start_from_file(path, callbacks, out, start_initiator);
  } catch (...) {
    return fail_current(KITE_ERROR_START);
  }
}

kite_status kite_initiator_start_string(const char* toml_text, const char* name, const kite_callbacks* callbacks,
                                        kite_initiator** out) {
  try {
    if (toml_text == nullptr) {
      if (out != nullptr) *out = nullptr;
      return fail(KITE_ERROR_ARGUMENT, "kite_initiator_start_string: toml is NULL");
    }
    return start_initiator(toml_text, name != nullptr ? name : "<string>", callbacks, out);
  } catch (...) {
    return fail_current(KITE_ERROR_START);
  }
}

size_t kite_initiator_session_count(const kite_initiator* i) { return i != nullptr ? i->sessions.size() : 0; }

kite_session* kite_initiator_session(kite_initiator* i, size_t index) {
  return i != nullptr && index < i->sessions.size() ? i->sessions[index].get() : nullptr;
}

void kite_initiator_shutdown(kite_initiator* i, int wait_ms) {
  if (i == nullptr || !i->host) return;
  i->host->request_logout();  // stops connecting; each session's thread sends its Logout
  if (wait_ms > 0) i->host->wait_disconnected(wait_ms);
  i->host->stop();
}

void kite_initiator_stop(kite_initiator* i) {
  if (i != nullptr && i->host) i->host->stop();
}

void kite_initiator_free(kite_initiator* i) {
  if (i == nullptr) return;
  if (i->host) i->host->stop();
  delete i;
}

kite_status kite_session_send(kite_session* s, const char* msg_type, const char* body, size_t body_length) {
  if (s == nullptr || msg_type == nullptr || (body == nullptr && body_length != 0))
    return fail(KITE_ERROR_ARGUMENT, "kite_session_send: NULL argument");
  const std::string_view type(msg_type), b(body, body_length);
  if (type.empty()) return fail(KITE_ERROR_ARGUMENT, "kite_session_send: empty MsgType");
  if (t_current == s) {
    const session::SendResult r = s->session->send_or_store(type, [&](codec::MessageWriter& w) { w.add_raw(b); });
    switch (r) {
      case session::SendResult::ok: return KITE_OK;
      case session::SendResult::stored: return KITE_STORED;
      case session::SendResult::too_large: return fail(KITE_TOO_LARGE, "kite_session_send: larger than SendClaimBytes");
      case session::SendResult::not_logged_on: return fail(KITE_NOT_LOGGED_ON, "kite_session_send: not logged on");
      case session::SendResult::back_pressured: return fail(KITE_BACK_PRESSURED, "kite_session_send: back-pressured");
    }
    return KITE_OK;
  }
  if (!s->logged_on.load(std::memory_order_acquire))
    return fail(KITE_NOT_LOGGED_ON, "kite_session_send: " + s->session->id() + " is not logged on");
  const kite_status st = s->post(type, b);
  if (st == KITE_BACK_PRESSURED) return fail(st, "kite_session_send: the session's queue is full");
  if (st == KITE_TOO_LARGE) return fail(st, "kite_session_send: larger than the session's queue");
  return st;
}

kite_status kite_session_reject(kite_session* s, const kite_message* m, int reason, const char* text) {
  if (s == nullptr || m == nullptr) return fail(KITE_ERROR_ARGUMENT, "kite_session_reject: NULL argument");
  if (t_current != s) return fail(KITE_ERROR_STATE, "kite_session_reject: only from this session's on_message");
  const session::SendResult r = s->session->send_business_reject(
      m->msg_seq_num, std::string_view(m->msg_type.data, m->msg_type.size), reason, text != nullptr ? text : "");
  if (r == session::SendResult::ok) return KITE_OK;
  if (r == session::SendResult::back_pressured) return fail(KITE_BACK_PRESSURED, "kite_session_reject: back-pressured");
  return fail(KITE_NOT_LOGGED_ON, "kite_session_reject: not sent");
}

const char* kite_session_id(const kite_session* s) { return s != nullptr ? s->session->id().c_str() : ""; }

size_t kite_session_index(const kite_session* s) { return s != nullptr ? s->index : 0; }

int kite_session_logged_on(const kite_session* s) {
  return s != nullptr && s->logged_on.load(std::memory_order_acquire) ? 1 : 0;
}

void kite_session_set_user(kite_session* s, void* user) {
  if (s != nullptr) s->user.store(user, std::memory_order_release);
}

void* kite_session_user(const kite_session* s) {
  return s != nullptr ? s->user.load(std::memory_order_acquire) : nullptr;
}

}  // extern "C"
