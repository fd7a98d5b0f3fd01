#include "kite/session/registry.hpp"

#include <stdexcept>

#include "kite/session/validation.hpp"

namespace kite::session {

const char* to_string(Refusal r) noexcept {
  switch (r) {
    case Refusal::none: return "accepted";
    case Refusal::unknown_session: return "unknown session";
    case Refusal::wrong_password: return "wrong password";
    case Refusal::already_logged_on: return "session already logged on";
    case Refusal::outside_schedule: return "outside the session's schedule";
    case Refusal::logons_paused: return "logons paused by the operator";
  }
  return "?";
}

Session& SessionRegistry::add(const SessionSettings& settings, Application& app, std::unique_ptr<MessageStore> store) {
  settings.check();
  const std::string id = settings.id();
  if (find(id) != nullptr) throw std::invalid_argument("session " + id + " configured twice");
  if (!store) store = make_store(settings.store, id, clock_.now_ns());
  if (const auto* f = dynamic_cast<const FileStore*>(store.get()); f != nullptr && f->discarded_batch_messages() != 0)
    log_.logf(LogLevel::warn, id,
              "journal: %zu message(s) of an inbound message unfinished at the last stop were dropped (never sent); "
              "expecting %llu again",
              f->discarded_batch_messages(), static_cast<unsigned long long>(f->next_target_seq()));
  Entry e;
  e.store = std::move(store);
  if (settings.validate) e.validator = DictionaryValidator::for_settings(settings);
  e.session = std::make_unique<Session>(settings, *e.store, app, clock_, log_);
  e.session->set_validator(e.validator.get());
  entries_.push_back(std::move(e));
  return *entries_.back().session;
}

Session* SessionRegistry::find(std::string_view id) const noexcept {
  for (const Entry& e : entries_)
    if (e.session->id() == id) return e.session.get();
  return nullptr;
}

std::size_t SessionRegistry::index_of(const Session* s) const noexcept {
  for (std::size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].session.get() == s) return i;
  return entries_.size();
}

Lookup SessionRegistry::identify(const codec::Header& h, const codec::FieldIndex& ix) const noexcept {
  for (const Entry& e : entries_) {
    const SessionSettings& s = e.session->settings();
    if (s.role != Role::acceptor) continue;
    if (h.begin_string != s.begin_string || h.sender_comp_id != s.target_comp_id ||
        h.target_comp_id != s.sender_comp_id)
      continue;
    if (!s.target_sub_id.empty() && h.sender_sub_id != s.target_sub_id) continue;
    if (!s.sender_sub_id.empty() && h.target_sub_id != s.sender_sub_id) continue;
    if (!s.target_location_id.empty() && h.sender_location_id != s.target_location_id) continue;
    if (!s.sender_location_id.empty() && h.target_location_id != s.sender_location_id) continue;
    Session* session = e.session.get();
    if (!s.password.empty()) {
      std::string_view pw;
      if (ix.get(codec::tag::Password, pw) != codec::Get::ok || pw != s.password)
        return {session, Refusal::wrong_password};
    }
    if (session->bound()) return {session, Refusal::already_logged_on};
    if (logons_paused()) return {session, Refusal::logons_paused};
    if (!s.schedule.in_session(clock_.now_ns())) return {session, Refusal::outside_schedule};
    return {session, Refusal::none};
  }
  return {nullptr, Refusal::unknown_session};
}

}  // namespace kite::session
