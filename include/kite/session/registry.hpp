// Acceptor identity: the sessions an acceptor is configured for, looked up by
// the Logon that opens a connection.
//
// A Logon is matched on BeginString, SenderCompID and TargetCompID (the
// peer's, i.e. our TargetCompID and SenderCompID), plus the Sub/Location IDs
// a session configures. It is refused, with a logged reason, when no session
// matches, when the configured Password differs, when the session is already
// bound to a live connection (the live one is left alone), when it is
// outside the session's schedule, or while logons are paused.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "kite/codec/field_index.hpp"
#include "kite/codec/header.hpp"
#include "kite/session/session.hpp"

namespace kite::session {

enum class Refusal : unsigned char {
  none,
  unknown_session,
  wrong_password,
  already_logged_on,
  outside_schedule,
  logons_paused,  // the operator paused logons (kite-admin pause-logons)
};
const char* to_string(Refusal r) noexcept;

struct Lookup {
  Session* session = nullptr;
  Refusal refusal = Refusal::none;
};

class SessionRegistry {
 public:
  SessionRegistry(const Clock& clock, Logger& log) noexcept : clock_(clock), log_(log) {}

  // Adds a session (set-up time): makes its store from settings.store unless
  // one is given, and its DictionaryValidator when settings.validate, and
  // owns them. Throws on bad settings, a dictionary that does not load, or a
  // duplicate ID.
  Session& add(const SessionSettings& settings, Application& app, std::unique_ptr<MessageStore> store = nullptr);

  // Identifies the session a Logon is for; does not bind anything.
  Lookup identify(const codec::Header& logon, const codec::FieldIndex& ix) const noexcept;

  Session* find(std::string_view id) const noexcept;
  // The position of a session in the registry (size() when not one of its own).
  std::size_t index_of(const Session* s) const noexcept;
  // While paused, every Logon is refused with Refusal::logons_paused; sessions
  // already logged on are left alone. Any thread.
  void pause_logons(bool paused) noexcept { paused_.store(paused, std::memory_order_release); }
  bool logons_paused() const noexcept { return paused_.load(std::memory_order_acquire); }
  std::size_t size() const noexcept { return entries_.size(); }
  Session& at(std::size_t i) const noexcept { return *entries_[i].session; }
  const Clock& clock() const noexcept { return clock_; }
  Logger& logger() const noexcept { return log_; }

 private:
  struct Entry {
    std::unique_ptr<MessageStore> store;
    std::unique_ptr<MessageValidator> validator;
    std::unique_ptr<Session> session;
  };
  const Clock& clock_;
  Logger& log_;
  std::vector<Entry> entries_;
  std::atomic<bool> paused_{false};
};

}  // namespace kite::session
