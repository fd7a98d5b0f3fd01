#include "kite/session/session.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "kite/codec/values.hpp"
#include "kite/session/held_output.hpp"

namespace kite::session {

using codec::FieldIndex;
using codec::Header;
using codec::RejectReason;
namespace tag = codec::tag;

const char* to_string(SessionState s) noexcept {
  switch (s) {
    case SessionState::disconnected: return "disconnected";
    case SessionState::awaiting_logon: return "awaiting_logon";
    case SessionState::active: return "active";
    case SessionState::logout_sent: return "logout_sent";
    case SessionState::closing: return "closing";
  }
  return "?";
}

namespace {

// Whether got equals the len bytes at ours. Texts of up to 8 bytes are
// compared as one word when 8 bytes can be read at both: got lies in frame
// with 8 bytes from its start (a CompID or the BeginString of a frame: more
// fields follow them), and ours_end (the end of the copy ours is in) is 8
// bytes or more past ours; else by memcmp.
[[gnu::always_inline]] inline bool same_text(std::string_view got, const char* ours, std::size_t len,
                                             std::string_view frame, const char* ours_end) noexcept {
  if (got.size() != len) return false;
  const std::uintptr_t from = reinterpret_cast<std::uintptr_t>(got.data()) -
                              reinterpret_cast<std::uintptr_t>(frame.data());  // huge when got is before frame
  if (len - 1 < 8 && frame.size() >= 8 && from <= frame.size() - 8 && ours_end - ours >= 8) [[likely]] {
    std::uint64_t a, b;
    std::memcpy(&a, got.data(), 8);
    std::memcpy(&b, ours, 8);
    return ((a ^ b) << (64 - 8 * len)) == 0;
  }
  return len == 0 || std::memcmp(got.data(), ours, len) == 0;
}

bool is_admin(std::string_view t) noexcept {
  return t.size() == 1 &&
         (t[0] == '0' || t[0] == '1' || t[0] == '2' || t[0] == '3' || t[0] == '4' || t[0] == '5' || t[0] == 'A');
}

codec::HeaderFields header_fields(const SessionSettings& s) {
  return {s.begin_string,  s.sender_comp_id,     s.target_comp_id,    s.sender_sub_id,
          s.target_sub_id, s.sender_location_id, s.target_location_id};
}

// Tags the resend rewrites (header) or drops (trailer) when copying a stored message.
bool rewritten_on_resend(std::uint32_t t) noexcept {
  switch (t) {
    case tag::BeginString:
    case tag::BodyLength:
    case tag::MsgType:
    case tag::SenderCompID:
    case tag::TargetCompID:
    case tag::SenderSubID:
    case tag::TargetSubID:
    case tag::SenderLocationID:
    case tag::TargetLocationID:
    case tag::MsgSeqNum:
    case tag::SendingTime:
    case tag::PossDupFlag:
    case tag::OrigSendingTime:
    case tag::CheckSum: return true;
    default: return false;
  }
}

// Frames the session reads again (queued while a gap was open, stored for a
// resend, repaired around a bad tag) are indexed into the thread's indexes,
// not each session's own (three 20 KiB indexes per session before). An
// index is held only within one call; a call nested on the same thread
// (another session's connection wired back to back, in tests) takes the
// next depth's. Each depth's is made at its first use on the thread.
struct RereadIndexes {
  std::vector<std::unique_ptr<FieldIndex>> by_depth;
  std::size_t depth = 0;
};
thread_local RereadIndexes t_reread;

class RereadIndex {
 public:
  RereadIndex() noexcept {
    RereadIndexes& t = t_reread;
    if (t.depth == t.by_depth.size()) t.by_depth.push_back(std::make_unique<FieldIndex>(1024));
    index_ = t.by_depth[t.depth++].get();
  }
  ~RereadIndex() { --t_reread.depth; }
  RereadIndex(const RereadIndex&) = delete;
  RereadIndex& operator=(const RereadIndex&) = delete;
  FieldIndex& operator*() const noexcept { return *index_; }

 private:
  FieldIndex* index_;
};

}  // namespace

Session::Session(const SessionSettings& settings, MessageStore& store, Application& app, const Clock& clock,
                 Logger& log)
    : store_(store),
      app_(app),
      clock_(clock),
      heart_bt_int_(settings.heart_bt_int),
      send_claim_bytes_(settings.send_claim_bytes),
      test_request_delay_(settings.test_request_delay),
      max_message_size_(settings.max_message_size),
      max_latency_s_(settings.max_latency_s),
      check_comp_id_(settings.check_comp_id),
      check_latency_(settings.check_latency),
      schedule_always_(settings.schedule.always),
      store_polls_(store.polls()),
      writer_(header_, settings.timestamp_precision),
      settings_(settings),
      id_(settings.id()),
      log_(log),
      header_(header_fields(settings)),
      overflow_(new char[settings.overflow_bytes]),
      stored_(new char[settings.send_claim_bytes]),
      queue_(new Queued[settings.max_queued == 0 ? 1 : settings.max_queued]),
      queue_bytes_(new char[settings.queue_bytes == 0 ? 1 : settings.queue_bytes]),
      invalid_frame_(new char[settings.max_message_size == 0 ? 1 : settings.max_message_size]) {
  settings_.check();
  const SessionSettings& e = settings_;
  if (e.sender_sub_id.empty() && e.target_sub_id.empty() && e.sender_location_id.empty() &&
      e.target_location_id.empty() && !e.sender_comp_id.empty() && !e.target_comp_id.empty() &&
      writer_.header_text() == "8=" + e.begin_string + codec::kSoh + "9=49=" + e.sender_comp_id + codec::kSoh + "56=" +
                                   e.target_comp_id + codec::kSoh) {
    expect_plain_ = true;
    expect_begin_len_ = static_cast<std::uint8_t>(e.begin_string.size());
    expect_sender_len_ = static_cast<std::uint8_t>(e.sender_comp_id.size());
    expect_target_len_ = static_cast<std::uint8_t>(e.target_comp_id.size());
  }
  if (store_.holds_sends())
    held_ = std::make_unique<HeldOutput>(store_, std::max(settings_.overflow_bytes, 4 * settings_.send_claim_bytes),
                                         settings_.send_claim_bytes);
}

Session::~Session() = default;

int Session::pass_held() noexcept {
  if (!held_ || held_->bound() == nullptr) return 0;
  held_->seal();
  return held_->release() != 0 ? 1 : 0;
}

// ------------------------------------------------------------------ writing

bool Session::drain_overflow() noexcept {
  if (overflow_len_ == 0) return true;
  if (out_ == nullptr) return false;
  std::size_t done = 0;
  while (done < overflow_len_) {
    const std::size_t chunk = std::min(overflow_len_ - done, settings_.send_claim_bytes);
    char* p = out_->claim(chunk);
    if (p == nullptr) break;
    std::memcpy(p, overflow_.get() + done, chunk);
    out_->commit(chunk);
    done += chunk;
  }
  if (done > 0) {
    std::memmove(overflow_.get(), overflow_.get() + done, overflow_len_ - done);
    overflow_len_ -= done;
  }
  return overflow_len_ == 0;
}

codec::MessageWriter* Session::begin_admin(std::string_view msg_type, std::uint64_t seq, bool wait) noexcept {
  if (out_ == nullptr || state_ == SessionState::closing) return nullptr;
  const std::size_t room = settings_.send_claim_bytes;
  char* p = nullptr;
  msg_in_overflow_ = false;
  if (drain_overflow()) p = out_->claim(room);
  if (p == nullptr) {
    if (overflow_len_ + room > settings_.overflow_bytes) {
      if (wait) return nullptr;
      log_.logf(LogLevel::error, id_, "send buffer and overflow (%zu bytes) full: disconnecting", overflow_len_);
      close("send overflow");
      return nullptr;
    }
    p = overflow_.get() + overflow_len_;
    msg_in_overflow_ = true;
  }
  msg_buf_ = p;
  msg_seq_ = seq;
  writer_.begin(p, room, msg_type, seq, now());
  if (!wait) add_answer_routing(writer_, msg_type);  // resends carry their own fields
  return &writer_;
}

namespace {
// Only a Reject, Logout or BusinessMessageReject carries the answered message's routing back.
bool carries_answer_routing(std::string_view msg_type) noexcept {
  return msg_type.size() == 1 && (msg_type[0] == '3' || msg_type[0] == '5' || msg_type[0] == 'j');
}
}  // namespace

void Session::add_answer_routing(codec::MessageWriter& w, std::string_view msg_type) noexcept {
  if (answering_ == nullptr || !carries_answer_routing(msg_type)) return;
  const Header& h = *answering_;
  const auto put = [&w](std::uint32_t t, std::string_view v) {
    if (!v.empty()) w.add_string(t, v);
  };
  if (settings_.sender_sub_id.empty()) put(tag::SenderSubID, h.target_sub_id);
  if (settings_.target_sub_id.empty()) put(tag::TargetSubID, h.sender_sub_id);
  if (settings_.sender_location_id.empty()) put(tag::SenderLocationID, h.target_location_id);
  if (settings_.target_location_id.empty()) put(tag::TargetLocationID, h.sender_location_id);
  put(tag::OnBehalfOfCompID, h.deliver_to_comp_id);
  put(tag::OnBehalfOfSubID, h.deliver_to_sub_id);
  put(tag::OnBehalfOfLocationID, h.deliver_to_location_id);
  put(tag::DeliverToCompID, h.on_behalf_of_comp_id);
  put(tag::DeliverToSubID, h.on_behalf_of_sub_id);
  put(tag::DeliverToLocationID, h.on_behalf_of_location_id);
  if (msg_type == "j" && settings_.fixt()) w.add_string(tag::ApplVerID, settings_.default_appl_ver_id);
}

bool Session::finish_admin(bool store_it) noexcept {
  const std::size_t n = writer_.finish();
  if (n == 0) {
    log_.logf(LogLevel::error, id_, "session message %llu does not fit SendClaimBytes (%zu)",
              static_cast<unsigned long long>(msg_seq_), settings_.send_claim_bytes);
    if (!msg_in_overflow_) out_->commit(0);
    return false;
  }
  if (store_it) keep(msg_seq_, {msg_buf_, n});
  if (observer_ != nullptr) [[unlikely]]
    report_sent(n);  // before the commit: a HeldOutput may move the bytes
  if (msg_in_overflow_)
    overflow_len_ += n;
  else
    out_->commit(n);
  last_sent_ns_ = now();
  return true;
}

void Session::report_sent(std::size_t n) noexcept {
  SentMessage m;
  m.msg_type = writer_.msg_type();
  m.bytes = std::string_view(msg_buf_, n);
  m.reject_reason = m.msg_type == "3" ? sent_reject_reason_ : -1;
  observer_->on_sent(m);
}

void Session::keep(std::uint64_t seq, std::string_view msg) noexcept {
  if (store_.store(seq, msg) || store_full_logged_) return;
  store_full_logged_ = true;
  log_.logf(LogLevel::error, id_,
            "store full at MsgSeqNum %llu (StoreCapacity): later messages are not kept; resends of them become "
            "gap fills",
            static_cast<unsigned long long>(seq));
}

[[gnu::hot]] codec::MessageWriter* Session::begin_app(std::string_view msg_type) noexcept {
  if (state_ != SessionState::active && state_ != SessionState::logout_sent) {
    last_send_ = SendResult::not_logged_on;
    return nullptr;
  }
  if (resend_end_ != 0 || !drain_overflow()) {
    last_send_ = SendResult::back_pressured;
    return nullptr;
  }
  char* p = out_->claim(send_claim_bytes_);
  if (p == nullptr) {
    last_send_ = SendResult::back_pressured;
    return nullptr;
  }
  return begin_message(p, msg_type);
}

codec::MessageWriter* Session::begin_message(char* p, std::string_view msg_type) noexcept {
  msg_buf_ = p;
  msg_in_overflow_ = false;
  msg_seq_ = store_.next_sender_seq();
  writer_.begin(p, send_claim_bytes_, msg_type, msg_seq_, now());
  if (carries_answer_routing(msg_type)) [[unlikely]]  // spares an application message the call
    add_answer_routing(writer_, msg_type);
  return &writer_;
}

[[gnu::hot]] SendResult Session::finish_app() noexcept {
  const std::size_t n = writer_.finish();
  if (n == 0) {
    out_->commit(0);
    return last_send_ = SendResult::too_large;
  }
  // Stored before it is published: a crash in between leaves a message the
  // peer never saw but can ask for again.
  keep(msg_seq_, {msg_buf_, n});
  if (observer_ != nullptr) [[unlikely]]
    report_sent(n);
  out_->commit(n);
  last_sent_ns_ = now();
  return last_send_ = SendResult::ok;
}

SendResult Session::finish_stored() noexcept {
  const std::size_t n = writer_.finish();
  if (n == 0) return last_send_ = SendResult::too_large;
  keep(msg_seq_, {msg_buf_, n});
  // Logged the 1st, 2nd, 4th, 8th... time: a slow peer does not flood the log.
  ++stored_unsent_;
  if ((stored_unsent_ & (stored_unsent_ - 1)) == 0)
    log_.logf(
        LogLevel::warn, id_, "MsgSeqNum %llu not sent now (%s): stored for the peer's ResendRequest (%llu so far)",
        static_cast<unsigned long long>(msg_seq_),
        out_ == nullptr || state_ != SessionState::active ? "not logged on" : "send buffer full or resend running",
        static_cast<unsigned long long>(stored_unsent_));
  return last_send_ = SendResult::stored;
}

void Session::send_heartbeat(std::string_view test_req_id) noexcept {
  auto* w = begin_admin("0", store_.next_sender_seq());
  if (w == nullptr) return;
  if (!test_req_id.empty()) w->add_string(tag::TestReqID, test_req_id);
  app_.before_send_admin(*this, "0", *w);
  finish_admin();
}

void Session::send_test_request() noexcept {
  std::memcpy(test_req_id_, "TEST-", 5);
  char* e = codec::write_uint(test_req_id_ + 5, static_cast<std::uint64_t>(now()));
  *e++ = '-';
  e = codec::write_uint(e, ++test_request_counter_);
  test_req_id_len_ = static_cast<std::size_t>(e - test_req_id_);
  auto* w = begin_admin("1", store_.next_sender_seq());
  if (w == nullptr) return;
  w->add_string(tag::TestReqID, {test_req_id_, test_req_id_len_});
  app_.before_send_admin(*this, "1", *w);
  if (finish_admin()) {
    test_request_sent_ns_ = now();
    log_.logf(LogLevel::warn, id_, "no message for %g s (HeartBtInt %d x %g): TestRequest %.*s sent",
              static_cast<double>(test_request_wait_ns()) / kNsPerSec, heart_bt_int_,
              1.0 + settings_.test_request_delay, static_cast<int>(test_req_id_len_), test_req_id_);
  }
}

void Session::send_logout_msg(std::string_view text) noexcept {
  auto* w = begin_admin("5", store_.next_sender_seq());
  if (w == nullptr) return;
  if (!text.empty()) w->add_string(tag::Text, text);
  app_.before_send_admin(*this, "5", *w);
  finish_admin();
}

void Session::send_logon() noexcept {
  auto* w = begin_admin("A", store_.next_sender_seq());
  if (w == nullptr) return;
  w->add_uint(tag::EncryptMethod, 0);
  w->add_uint(tag::HeartBtInt, static_cast<std::uint64_t>(heart_bt_int_));
  if (reset_requested_) w->add_bool(tag::ResetSeqNumFlag, true);
  if (!settings_.username.empty()) w->add_string(tag::Username, settings_.username);
  if (!settings_.password.empty()) w->add_string(tag::Password, settings_.password);
  if (settings_.fixt()) w->add_string(tag::DefaultApplVerID, settings_.default_appl_ver_id);
  app_.before_send_admin(*this, "A", *w);
  finish_admin();
}

void Session::send_logon_reply(bool reset) noexcept {
  auto* w = begin_admin("A", store_.next_sender_seq());
  if (w == nullptr) return;
  w->add_uint(tag::EncryptMethod, 0);
  w->add_uint(tag::HeartBtInt, static_cast<std::uint64_t>(heart_bt_int_));
  if (reset) w->add_bool(tag::ResetSeqNumFlag, true);
  if (settings_.fixt()) w->add_string(tag::DefaultApplVerID, settings_.default_appl_ver_id);
  app_.before_send_admin(*this, "A", *w);
  finish_admin();
}

void Session::open_gap(std::uint64_t expected, std::uint64_t seq) noexcept {
  gap_open_ = true;
  gap_until_ = seq;
  gap_seen_ = expected;
  gap_moved_ns_ = now();
  gap_retries_ = 0;
  queue_full_logged_ = false;
  log_.logf(LogLevel::warn, id_, "MsgSeqNum too high, expecting %llu but received %llu",
            static_cast<unsigned long long>(expected), static_cast<unsigned long long>(seq));
  send_resend_request(expected, 0);
}

int Session::watch_gap(std::int64_t t) noexcept {
  if (!gap_open_ || settings_.resend_timeout_ms <= 0) return 0;
  const std::uint64_t expected = store_.next_target_seq();
  if (expected != gap_seen_) {  // the resend is coming in
    gap_seen_ = expected;
    gap_moved_ns_ = t;
    gap_retries_ = 0;
    return 0;
  }
  if (t - gap_moved_ns_ < static_cast<std::int64_t>(settings_.resend_timeout_ms) * kNsPerMs) return 0;
  if (gap_retries_ >= settings_.resend_retries) {
    char text[96];
    const int n = std::snprintf(text, sizeof text, "ResendRequest unanswered: still expecting %llu after %u requests",
                                static_cast<unsigned long long>(expected), gap_retries_ + 1);
    logout_and_close({text, static_cast<std::size_t>(n)});
    return 1;
  }
  ++gap_retries_;
  gap_moved_ns_ = t;
  log_.logf(LogLevel::warn, id_, "gap has not moved for %d ms: asking again from %llu (%u of %u)",
            settings_.resend_timeout_ms, static_cast<unsigned long long>(expected), gap_retries_,
            settings_.resend_retries);
  send_resend_request(expected, 0);
  return 1;
}

void Session::send_resend_request(std::uint64_t begin, std::uint64_t end) noexcept {
  // "No end" was 999999 until FIX.4.2 made it 0.
  if (end == 0 && settings_.before_fix42()) end = 999999;
  auto* w = begin_admin("2", store_.next_sender_seq());
  if (w == nullptr) return;
  w->add_uint(tag::BeginSeqNo, begin);
  w->add_uint(tag::EndSeqNo, end);
  app_.before_send_admin(*this, "2", *w);
  if (finish_admin())
    log_.logf(LogLevel::warn, id_, "ResendRequest sent for %llu to %llu", static_cast<unsigned long long>(begin),
              static_cast<unsigned long long>(end));
}

void Session::send_reject(std::uint64_t ref_seq, std::string_view ref_msg_type, RejectReason reason,
                          std::uint32_t ref_tag, std::string_view text) noexcept {
  char digits[16];
  const char* e = ref_tag != 0 ? codec::write_uint(digits, ref_tag) : digits;
  send_reject(ref_seq, ref_msg_type, reason, std::string_view(digits, static_cast<std::size_t>(e - digits)), text);
}

void Session::send_reject(std::uint64_t ref_seq, std::string_view ref_msg_type, RejectReason reason,
                          std::string_view ref_tag, std::string_view text) noexcept {
  auto* w = begin_admin("3", store_.next_sender_seq());
  if (w == nullptr) return;
  w->add_uint(tag::RefSeqNum, ref_seq);
  if (!settings_.before_fix42()) {  // 4.0 and 4.1 define RefSeqNum and Text only
    if (!ref_tag.empty()) w->add_string(tag::RefTagID, ref_tag);
    if (!ref_msg_type.empty()) w->add_string(tag::RefMsgType, ref_msg_type);
    w->add_int(tag::SessionRejectReason, static_cast<std::int64_t>(reason));
  }
  if (!text.empty()) w->add_string(tag::Text, text);
  app_.before_send_admin(*this, "3", *w);
  sent_reject_reason_ = settings_.before_fix42() ? -1 : static_cast<std::int32_t>(reason);
  const bool sent = finish_admin();
  sent_reject_reason_ = -1;
  if (sent)
    log_.logf(LogLevel::warn, id_, "Reject of %llu (%.*s): reason %d tag %.*s: %.*s",
              static_cast<unsigned long long>(ref_seq), static_cast<int>(ref_msg_type.size()), ref_msg_type.data(),
              static_cast<int>(reason), ref_tag.empty() ? 1 : static_cast<int>(ref_tag.size()),
              ref_tag.empty() ? "0" : ref_tag.data(), static_cast<int>(text.size()), text.data());
}

SendResult Session::send_business_reject(std::uint64_t ref_seq, std::string_view ref_msg_type, int reason,
                                         std::string_view text, std::string_view ref_id) noexcept {
  if (settings_.before_fix42()) {  // no BusinessMessageReject yet: a Reject with Text says it
    if (state_ != SessionState::active && state_ != SessionState::logout_sent) return SendResult::not_logged_on;
    const std::uint64_t before = store_.next_sender_seq();
    send_reject(ref_seq, ref_msg_type, RejectReason::other, 0, text);
    return store_.next_sender_seq() != before ? SendResult::ok : SendResult::back_pressured;
  }
  return send("j", [&](codec::MessageWriter& w) {
    w.add_uint(tag::RefSeqNum, ref_seq);
    w.add_string(tag::RefMsgType, ref_msg_type);
    if (!ref_id.empty()) w.add_string(tag::BusinessRejectRefID, ref_id);
    w.add_int(tag::BusinessRejectReason, reason);
    if (!text.empty()) w.add_string(tag::Text, text);
  });
}

bool Session::send_gap_fill(std::uint64_t seq, std::uint64_t new_seq) noexcept {
  auto* w = begin_admin("4", seq, true);
  if (w == nullptr) return false;
  w->add_bool(tag::PossDupFlag, true);
  w->add_timestamp(tag::OrigSendingTime, now());
  w->add_bool(tag::GapFillFlag, true);
  w->add_uint(tag::NewSeqNo, new_seq);
  return finish_admin(false);
}

bool Session::resend_one(std::uint64_t seq, std::string_view stored, const FieldIndex& ix) noexcept {
  auto* w = begin_admin(ix.value_at(2), seq, true);
  if (w == nullptr) return false;
  w->add_bool(tag::PossDupFlag, true);
  std::string_view orig;
  if (ix.get(tag::SendingTime, orig) == codec::Get::ok) w->add_string(tag::OrigSendingTime, orig);
  for (const codec::FieldRef& f : ix) {
    if (rewritten_on_resend(f.tag)) continue;
    const std::uint32_t start = f.offset - static_cast<std::uint32_t>(codec::uint_digits(f.tag)) - 1;
    w->add_raw(stored.substr(start, f.offset + f.length + 1 - start));
  }
  return finish_admin(false);
}

int Session::pump_resend() noexcept {
  int work = 0;
  const RereadIndex lease;
  FieldIndex& resend_index = *lease;
  while (resend_next_ <= resend_end_ && resend_end_ != 0) {
    const std::uint64_t seq = resend_next_;
    const std::string_view stored = store_.get(seq);
    bool app_msg = false;
    if (!stored.empty() && resend_index.build(stored) && resend_index.size() > 3 &&
        resend_index[2].tag == tag::MsgType) {
      app_msg = !is_admin(resend_index.value_at(2));
    }
    if (app_msg) {
      if (gap_run_start_ != 0) {
        if (!send_gap_fill(gap_run_start_, seq)) return work;
        gap_run_start_ = 0;
        ++work;
      }
      if (!resend_one(seq, stored, resend_index)) return work;
      ++work;
    } else if (gap_run_start_ == 0) {
      gap_run_start_ = seq;
    }
    ++resend_next_;
  }
  if (gap_run_start_ != 0) {
    if (!send_gap_fill(gap_run_start_, resend_end_ + 1)) return work;
    gap_run_start_ = 0;
    ++work;
  }
  resend_next_ = resend_end_ = 0;
  return work;
}

// ------------------------------------------------------------------ lifecycle

void Session::on_connected(SessionOutput& out) noexcept {
  out_ = &out;
  if (held_) {
    held_->bind(&out);
    out_ = held_.get();
  }
  overflow_len_ = 0;
  state_ = SessionState::awaiting_logon;
  state_since_ns_ = last_received_ns_ = last_sent_ns_ = now();
  test_request_sent_ns_ = 0;
  reached_active_ = false;
  heart_bt_int_ = settings_.heart_bt_int;
  maybe_schedule_reset();
  if (settings_.role == Role::initiator) {
    reset_requested_ = settings_.reset_on_logon || settings_.send_reset_seq_num_flag;
    if (reset_requested_) store_.reset(now());
    log_.logf(LogLevel::info, id_, "connected: sending Logon (seq %llu)",
              static_cast<unsigned long long>(store_.next_sender_seq()));
    send_logon();
  }
}

void Session::maybe_schedule_reset() noexcept {
  if (settings_.schedule.always) return;
  const std::int64_t start = settings_.schedule.period_start(now());
  if (store_.creation_time() < start) {
    log_.logf(LogLevel::info, id_, "new session period: sequence numbers reset to 1");
    store_.reset(now());
  }
}

void Session::reset_sequences() noexcept { store_.reset(now()); }

void Session::close(const char* reason) noexcept {
  if (out_ == nullptr || state_ == SessionState::closing) return;
  const bool was_on = state_ == SessionState::active || state_ == SessionState::logout_sent;
  state_ = SessionState::closing;
  if (was_on) app_.on_logout(*this, reason);
  // Held bytes (sync) wait for their commit: closing now would drop a
  // Logout answer the peer is waiting for, and leave the numbers apart.
  if (held_ && held_->held() != 0) {
    close_reason_ = reason;
    close_deadline_ns_ = now() + static_cast<std::int64_t>(settings_.logout_timeout_ms) * kNsPerMs;
    return;
  }
  out_->disconnect(reason);
}

int Session::finish_close() noexcept {
  if (close_reason_ == nullptr || out_ == nullptr) return 0;
  if (held_->held() != 0 && now() < close_deadline_ns_) return 0;
  const char* reason = close_reason_;
  close_reason_ = nullptr;
  out_->disconnect(reason);  // HeldOutput: what is durable goes, the rest is dropped
  return 1;
}

void Session::logout_and_close(std::string_view text) noexcept {
  log_.logf(LogLevel::warn, id_, "Logout and disconnect: %.*s", static_cast<int>(text.size()), text.data());
  send_logout_msg(text);
  close("session error (logged)");
}

void Session::wrong_begin_string(std::string_view begin, bool is_logout) noexcept {
  if (state_ == SessionState::logout_sent) {
    // Our Logout is out: the peer's answer ends it, whatever it says it speaks.
    if (is_logout) {
      log_.logf(LogLevel::info, id_, "Logout answered: disconnecting");
      close("logout completed");
    }
    return;
  }
  if (state_ != SessionState::active) {
    logout_and_close("Incorrect BeginString");
    return;
  }
  // Logged on: Logout and wait for its answer (or LogoutTimeout) so the close
  // is orderly; closing at once would meet the peer's answer with a reset.
  log_.logf(LogLevel::warn, id_, "unexpected BeginString %.*s (expecting %s): logging out",
            static_cast<int>(begin.size()), begin.data(), settings_.begin_string.c_str());
  logout("Incorrect BeginString");
}

void Session::logout_seq_too_low(std::uint64_t expected, std::uint64_t received) noexcept {
  char text[96];
  const int n = std::snprintf(text, sizeof text, "MsgSeqNum too low, expecting %llu but received %llu",
                              static_cast<unsigned long long>(expected), static_cast<unsigned long long>(received));
  logout_and_close({text, static_cast<std::size_t>(n)});
}

void Session::logout(std::string_view text) noexcept {
  if (state_ != SessionState::active) {
    if (state_ == SessionState::awaiting_logon) close("logout before logon");
    return;
  }
  log_.logf(LogLevel::info, id_, "Logout sent: %.*s", static_cast<int>(text.size()), text.data());
  send_logout_msg(text);
  state_ = SessionState::logout_sent;
  state_since_ns_ = now();
}

void Session::on_disconnected(const char* reason) noexcept {
  if (state_ == SessionState::active || state_ == SessionState::logout_sent) app_.on_logout(*this, reason);
  if (!reached_active_) ++failures_;
  log_.logf(LogLevel::info, id_, "disconnected (%s); next seq out %llu, in %llu", reason,
            static_cast<unsigned long long>(store_.next_sender_seq()),
            static_cast<unsigned long long>(store_.next_target_seq()));
  out_ = nullptr;
  close_reason_ = nullptr;
  if (held_) held_->bind(nullptr);
  if (settings_.store.refresh_on_logon) store_.release();
  refreshing_ = refreshed_ = false;
  state_ = SessionState::disconnected;
  overflow_len_ = 0;
  queue_head_ = queue_count_ = queue_used_ = 0;
  gap_open_ = false;
  resend_next_ = resend_end_ = gap_run_start_ = 0;
  last_disconnect_ns_ = now();
  if (settings_.reset_on_disconnect) store_.reset(now());
}

std::int64_t Session::next_connect_time() const noexcept {
  std::int64_t t;
  if (last_disconnect_ns_ == 0) {
    t = now();
  } else if (failures_ == 0) {
    t = last_disconnect_ns_ + static_cast<std::int64_t>(settings_.reconnect_interval_ms) * kNsPerMs;
  } else {
    const int shift = std::min(failures_ - 1, 20);
    const std::int64_t delay = std::min<std::int64_t>(
        static_cast<std::int64_t>(settings_.reconnect_interval_ms) << shift, settings_.reconnect_max_ms);
    t = last_disconnect_ns_ + delay * kNsPerMs;
  }
  if (!settings_.schedule.in_session(t)) t = settings_.schedule.next_start(t);
  return t;
}

void Session::on_connect_failed() noexcept {
  ++failures_;
  last_disconnect_ns_ = now();
}

void Session::became_active() noexcept {
  state_ = SessionState::active;
  state_since_ns_ = now();
  failures_ = 0;
  reached_active_ = true;
  test_request_sent_ns_ = 0;
  if (heart_bt_int_ > 0)
    log_.logf(LogLevel::info, id_, "logged on (HeartBtInt %d, TestRequest after %g s, next seq out %llu, in %llu)",
              heart_bt_int_, static_cast<double>(test_request_wait_ns()) / kNsPerSec,
              static_cast<unsigned long long>(store_.next_sender_seq()),
              static_cast<unsigned long long>(store_.next_target_seq()));
  else
    log_.logf(LogLevel::info, id_, "logged on (HeartBtInt 0: no heartbeats, next seq out %llu, in %llu)",
              static_cast<unsigned long long>(store_.next_sender_seq()),
              static_cast<unsigned long long>(store_.next_target_seq()));
  app_.on_logon(*this);
}

int Session::on_timer() noexcept {
  // What the last turn or the application sent goes out once committed.
  int work = pass_held();
  work += timer_turn();
  work += pass_held();
  return work + finish_close();
}

[[gnu::hot]] std::int64_t Session::timer_quiet_ns() const noexcept {
  if (out_ == nullptr || state_ != SessionState::active || held_ || refreshing_ || overflow_len_ != 0 ||
      resend_end_ != 0 || rejects_suppressed_ != 0 || gap_open_ || test_request_sent_ns_ != 0 || !schedule_always_ ||
      store_polls_ || heart_bt_int_ <= 0)
    return 0;
  // The earlier of timer_turn's two deadlines: our Heartbeat, their TestRequest.
  const std::int64_t heartbeat = last_sent_ns_ + static_cast<std::int64_t>(heart_bt_int_) * kNsPerSec;
  const std::int64_t test_request = last_received_ns_ + test_request_wait_ns();
  const std::int64_t q = std::min(heartbeat, test_request) - clock_seen_ns_;
  return q > 0 ? q : 0;
}

int Session::timer_turn() noexcept {
  if (out_ == nullptr || state_ == SessionState::closing) return 0;
  int work = poll_refresh();
  if (out_ == nullptr || state_ == SessionState::closing) return work;
  if (overflow_len_ != 0 && drain_overflow()) ++work;
  if (resend_end_ != 0) work += pump_resend();
  const std::int64_t t = now();
  clock_seen_ns_ = t;
  work += store_.poll(t);
  if (rejects_suppressed_ != 0) flush_suppressed_rejects(t);
  switch (state_) {
    case SessionState::awaiting_logon:
      if (t - state_since_ns_ >= static_cast<std::int64_t>(settings_.logon_timeout_ms) * kNsPerMs) {
        log_.logf(LogLevel::warn, id_, "no Logon answer within %d ms: disconnecting", settings_.logon_timeout_ms);
        close("logon timeout");
        ++work;
      }
      break;
    case SessionState::logout_sent:
      if (t - state_since_ns_ >= static_cast<std::int64_t>(settings_.logout_timeout_ms) * kNsPerMs) {
        log_.logf(LogLevel::warn, id_, "no Logout answer within %d ms: disconnecting", settings_.logout_timeout_ms);
        close("logout timeout");
        ++work;
      }
      break;
    case SessionState::active: {
      if (!schedule_always_ && !settings_.schedule.in_session(t)) {
        logout("End of session period");
        return work + 1;
      }
      work += watch_gap(t);
      if (state_ != SessionState::active) return work;
      if (heart_bt_int_ <= 0) break;
      const std::int64_t hb = static_cast<std::int64_t>(heart_bt_int_) * kNsPerSec;
      const std::int64_t wait = test_request_wait_ns();
      if (t - last_sent_ns_ >= hb) {
        send_heartbeat({});
        ++work;
      }
      if (test_request_sent_ns_ != 0) {
        if (last_received_ns_ > test_request_sent_ns_) {
          test_request_sent_ns_ = 0;
        } else if (t - test_request_sent_ns_ >= wait) {
          log_.logf(LogLevel::error, id_, "TestRequest %.*s unanswered: disconnecting",
                    static_cast<int>(test_req_id_len_), test_req_id_);
          close("test request unanswered");
          return work + 1;
        }
      } else if (t - last_received_ns_ >= wait) {
        send_test_request();
        ++work;
      }
      break;
    }
    default: break;
  }
  return work;
}

bool Session::on_invalid_tag(std::string_view frame, std::uint32_t at) noexcept {
  if (at >= frame.size() || frame.size() > settings_.max_message_size) return false;
  const std::size_t end = frame.find(codec::kSoh, at);
  if (end == std::string_view::npos) return false;
  const std::string_view field = frame.substr(at, end - at);
  const std::string_view tag_text = field.substr(0, std::min(field.find('='), sizeof invalid_tag_));
  char* b = invalid_frame_.get();
  std::memcpy(b, frame.data(), at);
  std::memcpy(b + at, frame.data() + end + 1, frame.size() - end - 1);
  Header h;
  const RereadIndex lease;
  FieldIndex& invalid_index = *lease;
  if (!invalid_index.build(b, frame.size() - (end + 1 - at)) || !codec::read_header(invalid_index, h)) return false;
  std::memcpy(invalid_tag_, tag_text.data(), tag_text.size());
  invalid_tag_len_ = tag_text.empty() ? 1 : tag_text.size();
  if (tag_text.empty()) invalid_tag_[0] = '0';  // "=X": no tag at all
  on_message(h, invalid_index);
  invalid_tag_len_ = 0;  // when the message stopped before its verdict
  return true;
}

void Session::on_garbled(const char* why) noexcept {
  ++garbled_;
  log_.logf(LogLevel::warn, id_, "garbled message ignored (%s); still expecting %llu", why,
            static_cast<unsigned long long>(store_.next_target_seq()));
}

// ------------------------------------------------------------------ reading

[[gnu::hot]] void Session::on_message(const Header& h, const FieldIndex& ix) noexcept {
  if (out_ == nullptr || state_ == SessionState::closing || state_ == SessionState::disconnected) return;
  if (msg_depth_ == 0) {
    msg_now_ = clock_.now_ns();
    clock_seen_ns_ = msg_now_;
    // The message's number and everything it makes us send are made durable
    // together (exactly-once across a crash): see MessageStore::begin_inbound.
    store_.begin_inbound();
  }
  ++msg_depth_;
  const Header* outer = answering_;
  answering_ = &h;
  handle_message(h, ix);
  answering_ = outer;
  if (--msg_depth_ == 0) {
    store_.end_inbound();
    pass_held();
  }
}

bool Session::park_for_refresh(const Header& h, const FieldIndex& ix) noexcept {
  if (refreshing_) {
    // Sent behind the Logon before our answer: replayed after it.
    if (!enqueue(h, ix)) close("queue full while the session was being reloaded");
    return true;
  }
  if (refreshed_ || state_ != SessionState::awaiting_logon || h.msg_type != "A" || settings_.role != Role::acceptor ||
      !settings_.store.refresh_on_logon)
    return false;
  if (!store_.begin_refresh()) {
    refreshed_ = true;
    return false;
  }
  queue_head_ = queue_count_ = queue_used_ = 0;
  if (!enqueue(h, ix)) {
    log_.logf(LogLevel::error, id_, "Logon refused: it does not fit the queue (QueueBytes) to wait for the reload");
    close("logon too large to park");
    return true;
  }
  refreshing_ = true;
  log_.logf(LogLevel::info, id_, "Logon: taking the session and reloading it from its store (RefreshOnLogon)");
  return true;
}

int Session::poll_refresh() noexcept {
  if (!refreshing_) return 0;
  switch (store_.poll_refresh()) {
    case MessageStore::Refresh::pending: return 0;
    case MessageStore::Refresh::failed:
      refreshing_ = false;
      queue_head_ = queue_count_ = queue_used_ = 0;
      log_.logf(LogLevel::error, id_, "Logon refused: the store could not take the session: %s",
                store_.refresh_error());
      close("session store refresh failed");
      return 1;
    case MessageStore::Refresh::done: break;
  }
  refreshing_ = false;
  refreshed_ = true;
  log_.logf(LogLevel::info, id_, "reloaded from the store: next seq out %llu, in %llu",
            static_cast<unsigned long long>(store_.next_sender_seq()),
            static_cast<unsigned long long>(store_.next_target_seq()));
  // The Logon first (whatever its number), then what queued behind it.
  const Queued q = queue_[queue_head_++];
  Header h;
  const RereadIndex lease;
  if ((*lease).build(queue_bytes_.get() + q.offset, q.length) && codec::read_header(*lease, h)) on_message(h, *lease);
  if (queue_head_ == queue_count_) queue_head_ = queue_count_ = queue_used_ = 0;
  return 1;
}

[[gnu::hot]] void Session::handle_message(const Header& h, const FieldIndex& ix) noexcept {
  last_received_ns_ = now();
  if (park_for_refresh(h, ix)) return;
  if (state_ == SessionState::awaiting_logon && h.msg_type != "A") {
    log_.logf(LogLevel::error, id_, "first message is not a Logon (35=%.*s): disconnecting",
              static_cast<int>(h.msg_type.size()), h.msg_type.data());
    close("first message not a Logon");
    return;
  }
  const bool begin_ok =
      expect_plain_ ? same_text(h.begin_string, writer_.header_text_data() + 2, expect_begin_len_, ix.frame(),
                                writer_.header_text_data() + codec::MessageWriter::kHeaderTextRoom)
                    : h.begin_string == settings_.begin_string;
  if (!begin_ok) [[unlikely]] {
    wrong_begin_string(h.begin_string, h.msg_type == "5");
    return;
  }
  const Verdict verdict = check(h, ix);
  // Taken now: queued messages replayed below are not this one.
  const std::size_t invalid_tag = std::exchange(invalid_tag_len_, 0);
  switch (verdict) {
    case Verdict::process:
      if (invalid_tag != 0) [[unlikely]] {
        if (state_ == SessionState::awaiting_logon) {
          logout_and_close("Invalid tag number in Logon");
          break;
        }
        send_reject(h.msg_seq_num, h.msg_type, RejectReason::invalid_tag_number,
                    std::string_view(invalid_tag_, invalid_tag), "Invalid tag number");
        consume(h);
        break;
      }
      if (validator_ != nullptr) {
        const Validation v = validator_->validate(h, ix);
        if (!v.ok && state_ == SessionState::awaiting_logon) {
          // A Logon is refused by ending the connection, never with a Reject
          // (a session left awaiting its Logon would hang until the timeout).
          char text[128];
          const int n = v.ref_tag == tag::DefaultApplVerID
                            ? std::snprintf(text, sizeof text, "DefaultApplVerID(1137) required on FIXT.1.1")
                            : std::snprintf(text, sizeof text, "Logon refused: %s (tag %u)", v.text, v.ref_tag);
          logout_and_close({text, static_cast<std::size_t>(std::min<int>(n, sizeof text - 1))});
          break;
        }
        if (!v.ok) {
          send_reject(h.msg_seq_num, h.msg_type, v.reason, v.ref_tag, v.text);
          consume(h);
          break;
        }
      }
      dispatch(h, ix);
      break;
    case Verdict::ignore:
    case Verdict::queue:
    case Verdict::stop: break;
  }
  if (queue_count_ != queue_head_ && !draining_) drain_queue();
}

[[gnu::hot]] Session::Verdict Session::check(const Header& h, const FieldIndex& ix) noexcept {
  const std::uint64_t expected = store_.next_target_seq();
  const bool sequence_reset = h.msg_type == "4";
  bool gap_fill = false;
  if (sequence_reset) ix.get(tag::GapFillFlag, gap_fill);
  // A Logon refused here ends the connection: no Reject (its number is not
  // ours to judge yet), and the stored numbers do not move.
  const bool logon = state_ == SessionState::awaiting_logon;
  if (h.msg_seq_num == 0 && !ix.has(tag::MsgSeqNum)) {
    logout_and_close("MsgSeqNum(34) missing");
    return Verdict::stop;
  }
  const SessionSettings& s = settings_;
  if (!logon && (h.sender_comp_id.empty() || h.target_comp_id.empty())) {
    // A required header field missing or empty: Reject, the session goes on.
    const std::uint32_t t = h.sender_comp_id.empty() ? tag::SenderCompID : tag::TargetCompID;
    const bool present = ix.has(t);
    send_reject(h.msg_seq_num, h.msg_type,
                present ? RejectReason::tag_specified_without_value : RejectReason::required_tag_missing, t,
                t == tag::SenderCompID ? (present ? "SenderCompID(49) empty" : "SenderCompID(49) missing")
                                       : (present ? "TargetCompID(56) empty" : "TargetCompID(56) missing"));
    consume(h);
    return Verdict::ignore;
  }
  // CheckCompID=N: after the Logon, any CompIDs are taken.
  const auto comp_ids_match = [&] {
    if (expect_plain_) {
      // "8=" BeginString SOH "9=49=" Sender SOH "56=" Target SOH.
      const char* const text = writer_.header_text_data();
      const char* const sender = text + expect_begin_len_ + 8;
      const char* const target = sender + expect_sender_len_ + 4;
      const char* const text_end = text + codec::MessageWriter::kHeaderTextRoom;
      return same_text(h.sender_comp_id, target, expect_target_len_, ix.frame(), text_end) &&
             same_text(h.target_comp_id, sender, expect_sender_len_, ix.frame(), text_end);
    }
    return h.sender_comp_id == s.target_comp_id && h.target_comp_id == s.sender_comp_id &&
           (s.target_sub_id.empty() || h.sender_sub_id == s.target_sub_id) &&
           (s.sender_sub_id.empty() || h.target_sub_id == s.sender_sub_id) &&
           (s.target_location_id.empty() || h.sender_location_id == s.target_location_id) &&
           (s.sender_location_id.empty() || h.target_location_id == s.sender_location_id);
  };
  const bool comp_ok = (!check_comp_id_ && !logon) || comp_ids_match();
  if (!comp_ok) {
    std::uint32_t ref = 0;
    if (h.sender_comp_id != s.target_comp_id)
      ref = tag::SenderCompID;
    else if (h.target_comp_id != s.sender_comp_id)
      ref = tag::TargetCompID;
    if (state_ == SessionState::active || state_ == SessionState::logout_sent) {
      send_reject(h.msg_seq_num, h.msg_type, RejectReason::compid_problem, ref, "CompID problem");
      consume(h);
      logout("CompID problem");
    } else {
      logout_and_close("CompID problem");
    }
    return Verdict::stop;
  }
  std::int64_t sending = 0;
  if (!codec::parse_utc_timestamp(h.sending_time, sending)) {
    const bool missing = h.sending_time.empty();
    if (logon) {
      logout_and_close(missing ? "SendingTime(52) missing" : "SendingTime(52) is not a UTCTimestamp");
      return Verdict::stop;
    }
    send_reject(h.msg_seq_num, h.msg_type,
                missing ? RejectReason::required_tag_missing : RejectReason::incorrect_data_format, tag::SendingTime,
                missing ? "SendingTime(52) missing" : "SendingTime(52) is not a UTCTimestamp");
    consume(h);
    return Verdict::ignore;
  }
  if (check_latency_ && max_latency_s_ > 0) {
    const std::int64_t d = now() - sending;
    const std::int64_t lim = static_cast<std::int64_t>(max_latency_s_) * kNsPerSec;
    if (d > lim || d < -lim) {
      if (logon) {
        logout_and_close("SendingTime accuracy problem");
        return Verdict::stop;
      }
      send_reject(h.msg_seq_num, h.msg_type, RejectReason::sending_time_accuracy_problem, tag::SendingTime,
                  "SendingTime accuracy problem");
      consume(h);
      if (state_ == SessionState::active)
        logout("SendingTime accuracy problem");
      else
        logout_and_close("SendingTime accuracy problem");
      return Verdict::stop;
    }
  }
  // PossDupFlag=Y: checked whether the number is new or already seen.
  if (h.poss_dup && !sequence_reset) {
    std::int64_t orig = 0;
    if (h.orig_sending_time.empty()) {
      send_reject(h.msg_seq_num, h.msg_type, RejectReason::required_tag_missing, tag::OrigSendingTime,
                  "OrigSendingTime(122) required with PossDupFlag=Y");
      consume(h);
      return Verdict::ignore;
    }
    if (!codec::parse_utc_timestamp(h.orig_sending_time, orig) || orig > sending) {
      send_reject(h.msg_seq_num, h.msg_type, RejectReason::sending_time_accuracy_problem, tag::OrigSendingTime,
                  "OrigSendingTime later than SendingTime");
      consume(h);
      logout("OrigSendingTime later than SendingTime");
      return Verdict::stop;
    }
  }
  if (h.msg_type == "A") return Verdict::process;            // on_logon checks the number (after any reset)
  if (sequence_reset && !gap_fill) return Verdict::process;  // reset mode ignores MsgSeqNum, 0 included
  if (h.msg_seq_num == expected) return Verdict::process;
  if (h.msg_seq_num > expected) {
    if (h.msg_type == "5") return Verdict::process;
    if (h.msg_type == "2") on_resend_request(h, ix);  // serve theirs first, then ask for ours
    if (!gap_open_) open_gap(expected, h.msg_seq_num);
    if (h.msg_seq_num > gap_until_) gap_until_ = h.msg_seq_num;
    if (h.msg_type != "2") enqueue(h, ix);
    return Verdict::queue;
  }
  if (h.msg_type == "2") {
    // Served before its own number is judged, as established engines do: a
    // peer asking again with a stale number gets its messages.
    log_.logf(LogLevel::warn, id_, "ResendRequest with MsgSeqNum %llu below the expected %llu: served",
              static_cast<unsigned long long>(h.msg_seq_num), static_cast<unsigned long long>(expected));
    on_resend_request(h, ix);
    return Verdict::ignore;
  }
  if (h.poss_dup) {
    log_.logf(LogLevel::info, id_, "PossDupFlag=Y message %llu already seen: ignored",
              static_cast<unsigned long long>(h.msg_seq_num));
    return Verdict::ignore;
  }
  logout_seq_too_low(expected, h.msg_seq_num);
  return Verdict::stop;
}

bool Session::enqueue(const Header& h, const FieldIndex& ix) noexcept {
  const std::string_view frame = ix.frame();
  if (queue_count_ >= settings_.max_queued || queue_used_ + frame.size() > settings_.queue_bytes) {
    if (!queue_full_logged_) {
      log_.logf(LogLevel::warn, id_,
                "gap queue full (%zu messages, %zu bytes): dropping MsgSeqNum %llu and later ones until the "
                "resend catches up",
                queue_count_ - queue_head_, queue_used_, static_cast<unsigned long long>(h.msg_seq_num));
      queue_full_logged_ = true;
    }
    return false;
  }
  std::memcpy(queue_bytes_.get() + queue_used_, frame.data(), frame.size());
  queue_[queue_count_++] = {h.msg_seq_num, static_cast<std::uint32_t>(queue_used_),
                            static_cast<std::uint32_t>(frame.size())};
  queue_used_ += frame.size();
  return true;
}

void Session::drain_queue() noexcept {
  draining_ = true;
  while (queue_head_ < queue_count_ && out_ != nullptr && state_ != SessionState::closing) {
    const Queued q = queue_[queue_head_];
    const std::uint64_t expected = store_.next_target_seq();
    if (q.seq > expected) break;
    ++queue_head_;
    if (q.seq < expected) continue;  // filled by a gap fill or a resend meanwhile
    Header h;
    const RereadIndex lease;
    if (!(*lease).build(queue_bytes_.get() + q.offset, q.length) || !codec::read_header(*lease, h)) continue;
    on_message(h, *lease);
  }
  if (queue_head_ == queue_count_) {
    queue_head_ = queue_count_ = queue_used_ = 0;
    if (gap_open_ && store_.next_target_seq() > gap_until_) {
      gap_open_ = false;
      log_.logf(LogLevel::info, id_, "gap closed; expecting %llu",
                static_cast<unsigned long long>(store_.next_target_seq()));
    }
  }
  draining_ = false;
}

[[gnu::hot]] void Session::dispatch(const Header& h, const FieldIndex& ix) noexcept {
  if (h.msg_type.size() == 1) {
    switch (h.msg_type[0]) {
      case 'A': on_logon(h, ix); return;
      case '5': on_logout_msg(h, ix); return;
      case '0': on_heartbeat(h, ix); break;
      case '1': on_test_request(h, ix); break;
      case '2':
        on_resend_request(h, ix);
        consume(h);
        break;
      case '4': on_sequence_reset(h, ix); break;
      case '3':
        consume(h);
        on_reject_received(h, ix);
        break;
      case 'j':
        consume(h);
        on_reject_received(h, ix);
        app_.on_message(*this, h, ix);
        return;
      default:
        consume(h);
        app_.on_message(*this, h, ix);
        return;
    }
    app_.on_admin(*this, h, ix);
    return;
  }
  consume(h);
  app_.on_message(*this, h, ix);
  if (gap_open_ && queue_head_ == queue_count_ && store_.next_target_seq() > gap_until_) gap_open_ = false;
}

void Session::on_logon(const Header& h, const FieldIndex& ix) noexcept {
  std::int64_t encrypt = -1;
  std::int64_t hb = -1;
  bool reset = false;
  ix.get(tag::ResetSeqNumFlag, reset);
  if (state_ == SessionState::active) {
    if (reset) {
      log_.logf(LogLevel::info, id_, "Logon with ResetSeqNumFlag=Y during the session: sequence numbers reset");
      store_.reset(now());
      store_.set_next_target_seq(h.msg_seq_num + 1);
      send_logon_reply(true);
    } else {
      consume(h);
      send_reject(h.msg_seq_num, "A", RejectReason::other, 0, "Logon while logged on");
    }
    return;
  }
  if (state_ != SessionState::awaiting_logon) return;
  if (settings_.role == Role::acceptor) {
    if (const char* why = store_.unavailable()) {
      log_.logf(LogLevel::error, id_, "Logon refused: %s; disconnecting without an answer (numbers unmoved)", why);
      close("session store unavailable");
      return;
    }
  }
  if (ix.get(tag::EncryptMethod, encrypt) != codec::Get::ok || encrypt != 0) {
    logout_and_close("EncryptMethod(98) must be 0");
    return;
  }
  if (ix.get(tag::HeartBtInt, hb) != codec::Get::ok || hb < 0 || hb > 3600) {
    logout_and_close("HeartBtInt(108) missing or invalid");
    return;
  }
  if (settings_.fixt() && !ix.has(tag::DefaultApplVerID)) {
    logout_and_close("DefaultApplVerID(1137) required on FIXT.1.1");
    return;
  }
  const bool acceptor = settings_.role == Role::acceptor;
  if (acceptor) {
    heart_bt_int_ = static_cast<std::int32_t>(hb);
    if (reset || settings_.reset_on_logon) store_.reset(now());
  } else if (reset && !reset_requested_) {
    store_.set_next_target_seq(1);
  }
  const std::uint64_t expected = store_.next_target_seq();
  if (h.msg_seq_num < expected) {
    logout_seq_too_low(expected, h.msg_seq_num);
    return;
  }
  if (acceptor && !reset && !settings_.reset_on_logon) skip_unsure_sent(ix);
  if (acceptor) send_logon_reply(reset);
  consume(h);  // before became_active(): its log line names the next number expected
  became_active();
  if (h.msg_seq_num > expected) open_gap(expected, h.msg_seq_num);
  app_.on_admin(*this, h, ix);
}

// A session taken from a store that sends before it commits (postgresql
// "async" under RefreshOnLogon): the previous holder may have sent numbers
// the store never got. Our next number must not fall below what the peer
// has seen: its NextExpectedMsgSeqNum(789) where it says (FIX.4.4, FIXT),
// else the store's bound on what was sent uncommitted. The numbers skipped
// are gap-filled when the peer asks for them (the store has no message there).
void Session::skip_unsure_sent(const FieldIndex& ix) noexcept {
  const std::uint64_t unsure = store_.unsure_sent();
  if (unsure == 0) return;
  const std::uint64_t stored = store_.next_sender_seq();
  std::uint64_t next = stored + unsure;
  std::uint64_t expected = 0;
  const bool has_789 = (settings_.begin_string == "FIX.4.4" || settings_.fixt()) &&
                       ix.get(tag::NextExpectedMsgSeqNum, expected) == codec::Get::ok && expected != 0;
  if (has_789) next = std::max(stored, expected);
  if (next == stored) return;
  log_.logf(has_789 && expected > stored + unsure ? LogLevel::warn : LogLevel::info, id_,
            "taken over from a store that sends before it commits: next seq out %llu instead of %llu (%s); the "
            "numbers between are gap-filled if asked for",
            static_cast<unsigned long long>(next), static_cast<unsigned long long>(stored),
            has_789 ? (expected > stored + unsure ? "the peer's NextExpectedMsgSeqNum, beyond the store's window"
                                                  : "the peer's NextExpectedMsgSeqNum")
                    : "past the store's window of messages sent uncommitted");
  store_.set_next_sender_seq(next);
}

void Session::on_logout_msg(const Header& h, const FieldIndex& ix) noexcept {
  consume(h);
  std::string_view text;
  ix.get(tag::Text, text);
  app_.on_admin(*this, h, ix);
  if (state_ == SessionState::logout_sent) {
    log_.logf(LogLevel::info, id_, "Logout answered: disconnecting");
    if (settings_.reset_on_logout) store_.reset(now());
    close("logout completed");
    return;
  }
  log_.logf(LogLevel::info, id_, "Logout received (%.*s): answering and disconnecting", static_cast<int>(text.size()),
            text.data());
  send_logout_msg({});
  if (settings_.reset_on_logout) store_.reset(now());
  close("peer logged out");
}

void Session::on_heartbeat(const Header& h, const FieldIndex& ix) noexcept {
  consume(h);
  std::string_view id;
  if (test_request_sent_ns_ != 0 && ix.get(tag::TestReqID, id) == codec::Get::ok &&
      id == std::string_view(test_req_id_, test_req_id_len_))
    test_request_sent_ns_ = 0;
}

void Session::on_reject_received(const Header& h, const FieldIndex& ix) noexcept {
  ++rejects_received_;
  const std::int64_t t = now();
  if (reject_logged_ns_ != 0 && t - reject_logged_ns_ < kNsPerSec) {
    ++rejects_suppressed_;  // a peer rejecting every order must not flood the log
    return;
  }
  const bool business = h.msg_type == "j";
  std::string_view ref_seq, ref_tag, reason, text, ref_type;
  ix.get(tag::RefSeqNum, ref_seq);
  ix.get(tag::RefTagID, ref_tag);
  ix.get(business ? tag::BusinessRejectReason : tag::SessionRejectReason, reason);
  ix.get(tag::Text, text);
  ix.get(tag::RefMsgType, ref_type);
  const auto shown = [](std::string_view v) { return v.empty() ? std::string_view("-") : v; };
  ref_seq = shown(ref_seq), ref_tag = shown(ref_tag), reason = shown(reason), ref_type = shown(ref_type);
  char more[64] = "";
  if (rejects_suppressed_ != 0)
    std::snprintf(more, sizeof more, " (%llu more in the last second not logged)",
                  static_cast<unsigned long long>(rejects_suppressed_));
  log_.logf(LogLevel::warn, id_, "%s received: RefSeqNum %.*s RefMsgType %.*s RefTagID %.*s reason %.*s: %.*s%s",
            business ? "BusinessMessageReject" : "Reject", static_cast<int>(ref_seq.size()), ref_seq.data(),
            static_cast<int>(ref_type.size()), ref_type.data(), static_cast<int>(ref_tag.size()), ref_tag.data(),
            static_cast<int>(reason.size()), reason.data(), static_cast<int>(text.size()), text.data(), more);
  rejects_suppressed_ = 0;
  reject_logged_ns_ = t;
}

void Session::flush_suppressed_rejects(std::int64_t t) noexcept {
  if (rejects_suppressed_ == 0 || t - reject_logged_ns_ < kNsPerSec) return;
  log_.logf(LogLevel::warn, id_, "%llu more Rejects received in the last second not logged (%llu in all)",
            static_cast<unsigned long long>(rejects_suppressed_), static_cast<unsigned long long>(rejects_received_));
  rejects_suppressed_ = 0;
  reject_logged_ns_ = t;
}

void Session::on_test_request(const Header& h, const FieldIndex& ix) noexcept {
  consume(h);
  std::string_view id;
  if (ix.get(tag::TestReqID, id) != codec::Get::ok || id.empty()) {
    send_reject(h.msg_seq_num, h.msg_type, RejectReason::required_tag_missing, tag::TestReqID,
                "TestReqID(112) missing");
    return;
  }
  send_heartbeat(id);
}

void Session::on_resend_request(const Header& h, const FieldIndex& ix) noexcept {
  std::uint64_t begin = 0, end = 0;
  if (ix.get(tag::BeginSeqNo, begin) != codec::Get::ok || ix.get(tag::EndSeqNo, end) != codec::Get::ok) {
    send_reject(h.msg_seq_num, h.msg_type, RejectReason::required_tag_missing,
                ix.has(tag::BeginSeqNo) ? tag::EndSeqNo : tag::BeginSeqNo, "BeginSeqNo/EndSeqNo missing or invalid");
    return;
  }
  const std::uint64_t last = store_.next_sender_seq() - 1;
  // 999999 was "no end" until FIX.4.2; 0 since 4.3.
  const bool old_infinity = settings_.before_fix42() || settings_.begin_string == "FIX.4.2";
  if (end == 0 || (old_infinity && end >= 999999) || end > last) end = last;
  log_.logf(LogLevel::info, id_, "ResendRequest for %llu to %llu (last sent %llu)",
            static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end),
            static_cast<unsigned long long>(last));
  if (begin == 0 || begin > end) return;
  if (resend_end_ != 0) {  // a newer request supersedes the one being served
    resend_next_ = std::min(resend_next_, begin);
    resend_end_ = std::max(resend_end_, end);
  } else {
    resend_next_ = begin;
    resend_end_ = end;
    gap_run_start_ = 0;
  }
  pump_resend();
}

void Session::on_sequence_reset(const Header& h, const FieldIndex& ix) noexcept {
  std::uint64_t new_seq = 0;
  if (ix.get(tag::NewSeqNo, new_seq) != codec::Get::ok) {
    send_reject(h.msg_seq_num, h.msg_type, RejectReason::required_tag_missing, tag::NewSeqNo, "NewSeqNo(36) missing");
    consume(h);
    return;
  }
  bool gap_fill = false;
  ix.get(tag::GapFillFlag, gap_fill);
  const std::uint64_t expected = store_.next_target_seq();
  if (new_seq > expected) {
    log_.logf(LogLevel::info, id_, "SequenceReset%s: expecting %llu instead of %llu", gap_fill ? "-GapFill" : "",
              static_cast<unsigned long long>(new_seq), static_cast<unsigned long long>(expected));
    store_.set_next_target_seq(new_seq);
    return;
  }
  if (new_seq == expected && !gap_fill) {
    log_.logf(LogLevel::warn, id_, "SequenceReset to the expected number %llu: nothing to do",
              static_cast<unsigned long long>(new_seq));
    return;
  }
  send_reject(h.msg_seq_num, h.msg_type, RejectReason::value_incorrect, tag::NewSeqNo,
              "attempt to lower sequence number, invalid value NewSeqNo(36)");
  if (gap_fill) consume(h);
}

}  // namespace kite::session
