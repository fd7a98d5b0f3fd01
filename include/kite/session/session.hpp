// The FIX session layer: one Session per configured counterparty.
//
// The Session knows nothing of sockets or framing. It is handed decoded
// messages (a Header and the FieldIndex it was read from, both views over the
// receive buffer) and answers through a SessionOutput, writing each reply with
// the codec's MessageWriter straight into the room the output lends it.
// Time comes from a Clock; events go to a Logger.
//
// What it does (FIX.4.0 to FIX.4.4, FIXT.1.1 with DefaultApplVerID; the FIX
// Session Layer Test Cases as QuickFIX's acceptor answers them, docs/session.md):
//  - Logon/Logout handshakes in both roles, HeartBtInt, ResetSeqNumFlag,
//    EncryptMethod=0, Username/Password (checked by the SessionRegistry);
//  - Heartbeat after HeartBtInt of our silence, TestRequest after
//    HeartBtInt * (1 + TestRequestDelayMultiplier) of theirs, disconnect
//    when that goes unanswered for as long again;
//  - inbound sequence checks: too low without PossDupFlag -> Logout naming
//    both numbers and disconnect; too high -> ResendRequest (EndSeqNo 0;
//    999999 on FIX.4.0/4.1) and
//    the message queued (bounded: MaxQueuedWhileGap messages / MaxQueuedBytes;
//    beyond the cap a message is dropped and logged: the open-ended
//    ResendRequest brings it again); a gap whose expected number does not
//    move for ResendRequestTimeout is asked for again, ResendRequestRetries
//    times, then Logout and disconnect; a ResendRequest with a number
//    already seen is served (no Logout);
//  - PossDupFlag (new number or already seen) without OrigSendingTime ->
//    Reject(1); OrigSendingTime after SendingTime, or SendingTime off by
//    more than MaxLatency -> Reject(10) and Logout; otherwise an already
//    seen PossDup is ignored (logged); CompID mismatch -> Reject(9) and
//    Logout (CheckCompID); CompID empty/missing -> Reject(4/1), session
//    kept; BeginString mismatch -> before logon, Logout and disconnect;
//    after, Logout and disconnect on its answer (or LogoutTimeout); first message not
//    a Logon -> disconnect; a Logon refused (SendingTime, DefaultApplVerID,
//    ...) -> Logout and disconnect, never a Reject, numbers unmoved;
//  - ResendRequest served from the store: application messages resent with
//    PossDupFlag=Y and OrigSendingTime, session messages (and messages the
//    store lacks) replaced by SequenceReset-GapFill, consecutive ones merged;
//    EndSeqNo 0 (or >= 999999 up to FIX.4.2) means "up to the last sent";
//  - SequenceReset in gap-fill and reset modes (reset mode whatever its
//    MsgSeqNum, 0 included); Reject with 373/45/371/372 (45 and 58 only on
//    FIX.4.0/4.1); Reject, Logout and BusinessMessageReject answering a
//    message carry its routing fields reversed;
//  - validation (optional MessageValidator) answered with Reject.
//
// Threading: every call is made from the thread that owns the connection.
// Sending never allocates; under back-pressure an application send returns
// SendResult::back_pressured (nothing consumed), while session messages and
// resends wait in a bounded overflow buffer (OverflowBytes) that drains on
// every call; overflowing that disconnects.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/encoder.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/fix.hpp"
#include "kite/codec/header.hpp"
#include "kite/session/clock.hpp"
#include "kite/session/log.hpp"
#include "kite/session/settings.hpp"
#include "kite/session/store.hpp"

namespace kite::session {

class Session;
class HeldOutput;

// Where a session's bytes go: claim room, write, commit (an engine
// connection through kite_link's OutboundOutput, or a test fake).
class SessionOutput {
 public:
  virtual ~SessionOutput() = default;
  // Room for at least `min` bytes, or nullptr under back-pressure.
  virtual char* claim(std::size_t min) noexcept = 0;
  virtual void commit(std::size_t n) noexcept = 0;
  // Close the connection after flushing what was committed. `reason` is static.
  virtual void disconnect(const char* reason) noexcept = 0;
};

// A message as the session sent it (committed to its output, or queued in
// its overflow buffer behind what the output could not take yet).
struct SentMessage {
  std::string_view msg_type;
  std::string_view bytes;           // the whole message; valid during the call only
  std::int32_t reject_reason = -1;  // a Reject's SessionRejectReason (373); -1 when it carries none
};

// Told of every message a session sends (the link counts and logs them from
// it, instead of reading the bytes back). Called on the session's thread;
// must not send on the session.
class SendObserver {
 public:
  virtual ~SendObserver() = default;
  virtual void on_sent(const SentMessage& m) noexcept = 0;
};

// The application above a session.
class Application {
 public:
  virtual ~Application() = default;
  virtual void on_logon(Session&) noexcept {}
  // The session left the logged-on state (logout or disconnect).
  virtual void on_logout(Session&, const char* reason) noexcept { (void)reason; }
  // An application message, in sequence, after the session's checks. The
  // views die when this returns.
  virtual void on_message(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept = 0;
  // A session message after it was processed (Reject, Logout, ...), for logging.
  virtual void on_admin(Session&, const codec::Header&, const codec::FieldIndex&) noexcept {}
  // Called while a session message is written, after its header fields and
  // before its body: may add fields (e.g. custom Logon tags).
  virtual void before_send_admin(Session&, std::string_view /*msg_type*/, codec::MessageWriter&) noexcept {}
};

// Optional per-session validation (the dictionary validator plugs in here).
struct Validation {
  bool ok = true;
  codec::RejectReason reason = codec::RejectReason::other;
  std::uint32_t ref_tag = 0;  // 0 when the problem is not one field's
  const char* text = "";      // static text for the Reject's Text (58)
};
class MessageValidator {
 public:
  virtual ~MessageValidator() = default;
  virtual Validation validate(const codec::Header& h, const codec::FieldIndex& ix) const noexcept = 0;
};

enum class SessionState : unsigned char {
  disconnected,    // no connection
  awaiting_logon,  // connected, no Logon yet (acceptor) / Logon sent, no answer (initiator)
  active,          // logged on
  logout_sent,     // our Logout is out, waiting for the answer
  closing,         // disconnect asked for; waiting for on_disconnected()
};
const char* to_string(SessionState s) noexcept;

enum class SendResult : unsigned char {
  ok,
  not_logged_on,   // nothing sent
  back_pressured,  // nothing sent: try again later
  too_large,       // did not fit SendClaimBytes
  stored,          // send_or_store: not sent now, kept under its MsgSeqNum for the peer's ResendRequest
};

// Line-aligned: its hot members (first) take the fewest lines.
class alignas(64) Session {
 public:
  Session(const SessionSettings& settings, MessageStore& store, Application& app, const Clock& clock, Logger& log);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // --- driven by the connection (kite_link, or a test) ----------------------
  // A connection is bound to this session. The initiator sends its Logon now.
  void on_connected(SessionOutput& out) noexcept;
  // One complete, well-formed message read from the wire.
  void on_message(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  // A complete frame whose field at offset `at` has a tag that is no tag
  // number (0, negative, not digits; the index refused it there): read
  // without that field, checked as any message, and answered with a Reject
  // (0, Invalid tag number, RefTagID as sent); the session goes on. False
  // when the rest does not read as a message either (then it is garbled).
  // Not the hot path: the frame is copied once into a buffer of the session's.
  [[gnu::cold]] bool on_invalid_tag(std::string_view frame, std::uint32_t at) noexcept;
  // A frame that failed its checksum/length or could not be indexed: ignored
  // (the expected sequence number does not move), counted and logged.
  [[gnu::cold]] void on_garbled(const char* why) noexcept;
  // Timers: heartbeats, test requests, logon/logout timeouts, schedule end,
  // draining the overflow buffer and resends, store flushing. Returns work done.
  int on_timer() noexcept;
  // How long (ns, by the clock's last reading in on_message or on_timer) no
  // on_timer() call has anything to do: logged on, with nothing pending (no
  // gap, resend, overflow, held bytes, TestRequest outstanding, schedule or
  // store that polls), until the next Heartbeat or TestRequest is due. 0 in
  // any other state: then the runtime's every turn is needed.
  std::int64_t timer_quiet_ns() const noexcept;
  // The connection is gone.
  void on_disconnected(const char* reason) noexcept;

  // --- the application's side ------------------------------------------------
  // Sends an application message: `body(codec::MessageWriter&)` adds the
  // header extras and body fields after 8/9/35/CompIDs/34/52. The message is
  // stored, then committed. Allocation-free.
  template <class Body>
  SendResult send(std::string_view msg_type, Body&& body) noexcept {
    codec::MessageWriter* w = begin_app(msg_type);
    if (w == nullptr) return last_send_;
    body(*w);
    return finish_app();
  }
  // An application message that must reach the peer even when it cannot
  // go out now (the send buffer full, a resend being served, no connection
  // or not logged on): it is then written into a buffer of the session's
  // own, stored under the next MsgSeqNum and not sent. The peer gets it by
  // resend when it next sees our numbers (any later message, a Heartbeat,
  // our next Logon), as FIX recovers any lost message. Returns ok or
  // stored (too_large when it does not fit SendClaimBytes: nothing kept,
  // the number not used). Allocation-free.
  template <class Body>
  SendResult send_or_store(std::string_view msg_type, Body&& body) noexcept {
    codec::MessageWriter* w = begin_app(msg_type);
    const bool now = w != nullptr;
    if (!now) w = begin_message(stored_.get(), msg_type);
    body(*w);
    return now ? finish_app() : finish_stored();
  }
  // Rejects and logouts are [[gnu::cold]]: GCC then moves the blocks that
  // call them out of the code lines an order runs through.
  // BusinessMessageReject (j) for an application message the application
  // does not support (reason 3 = unsupported message type); on FIX.4.2 and
  // later only (j exists since 4.2).
  [[gnu::cold]] SendResult send_business_reject(std::uint64_t ref_seq, std::string_view ref_msg_type, int reason,
                                                std::string_view text, std::string_view ref_id = {}) noexcept;
  // A session-level Reject of an inbound message.
  [[gnu::cold]] void send_reject(std::uint64_t ref_seq, std::string_view ref_msg_type, codec::RejectReason reason,
                                 std::uint32_t ref_tag, std::string_view text) noexcept;
  // The same with RefTagID as text (a tag that is no number: "0", "-5").
  [[gnu::cold]] void send_reject(std::uint64_t ref_seq, std::string_view ref_msg_type, codec::RejectReason reason,
                                 std::string_view ref_tag, std::string_view text) noexcept;
  // Starts a logout handshake: Logout(Text) now; disconnect on the answer or
  // after LogoutTimeout.
  [[gnu::cold]] void logout(std::string_view text) noexcept;
  // Initiator: sends Logon on a fresh connection (on_connected does it).
  void send_logon() noexcept;

  // UTC now as the session sees it: while an inbound message is being handled
  // (the application's on_message included), the clock is read once when the
  // message arrives and that reading is used for everything the message
  // causes (SendingTime of the replies, TransactTime, timer marks); outside a
  // message, the clock's now. One clock read per inbound message.
  std::int64_t time_ns() const noexcept { return now(); }

  // --- state -----------------------------------------------------------------
  SessionState state() const noexcept { return state_; }
  bool logged_on() const noexcept { return state_ == SessionState::active; }
  bool connected() const noexcept { return out_ != nullptr; }
  // Claims the session for one connection (any thread): false when another
  // connection holds it. The holder calls unbind() after on_disconnected().
  // Acquire/release order hands the session from one thread to the next.
  bool try_bind() noexcept {
    bool expected = false;
    return bound_.compare_exchange_strong(expected, true, std::memory_order_acq_rel);
  }
  void unbind() noexcept { bound_.store(false, std::memory_order_release); }
  bool bound() const noexcept { return bound_.load(std::memory_order_acquire); }
  const SessionSettings& settings() const noexcept { return settings_; }
  // settings().send_claim_bytes and max_message_size, from the session's hot
  // lines (the connection reads them for every frame).
  std::size_t send_claim_bytes() const noexcept { return send_claim_bytes_; }
  std::uint32_t max_message_size() const noexcept { return max_message_size_; }
  const std::string& id() const noexcept { return id_; }
  MessageStore& store() noexcept { return store_; }
  std::uint64_t next_sender_seq() const noexcept { return store_.next_sender_seq(); }
  std::uint64_t next_target_seq() const noexcept { return store_.next_target_seq(); }
  void set_next_sender_seq(std::uint64_t s) noexcept { store_.set_next_sender_seq(s); }
  void set_next_target_seq(std::uint64_t s) noexcept { store_.set_next_target_seq(s); }
  // Both numbers back to 1 and the stored messages forgotten.
  void reset_sequences() noexcept;
  std::int32_t heart_bt_int() const noexcept { return heart_bt_int_; }
  std::size_t queued() const noexcept { return queue_count_ - queue_head_; }
  // A gap in the peer's numbers is open (a ResendRequest is outstanding).
  bool in_gap() const noexcept { return gap_open_; }
  std::uint64_t garbled_count() const noexcept { return garbled_; }
  // Rejects (35=3) and BusinessMessageRejects (35=j) received, all counted
  // though their log lines are limited to one per second (the rest summed
  // into the next line).
  std::uint64_t rejects_received_count() const noexcept { return rejects_received_; }
  // Messages send_or_store kept for a resend instead of sending.
  std::uint64_t stored_unsent_count() const noexcept { return stored_unsent_; }
  std::size_t overflow_pending() const noexcept { return overflow_len_; }
  void set_validator(const MessageValidator* v) noexcept { validator_ = v; }
  // Who hears of each message sent (nullptr: nobody). From the thread that
  // holds the session.
  void observe(SendObserver* o) noexcept { observer_ = o; }

  // --- initiator back-off ------------------------------------------------------
  // When the runtime should next try to connect (UTC ns): now after a clean
  // start, then ReconnectInterval doubling up to ReconnectIntervalMax after
  // each failure, and never before the schedule's next period when outside it.
  std::int64_t next_connect_time() const noexcept;
  // The runtime reports a failed connect attempt (for the back-off).
  void on_connect_failed() noexcept;

 private:
  // Writing messages.
  codec::MessageWriter* begin_app(std::string_view msg_type) noexcept;
  SendResult finish_app() noexcept;
  // Starts the application message at p (the send buffer, or stored_).
  codec::MessageWriter* begin_message(char* p, std::string_view msg_type) noexcept;
  SendResult finish_stored() noexcept;
  // `wait`: under back-pressure with a full overflow buffer, return nullptr
  // (resends resume later) instead of disconnecting.
  codec::MessageWriter* begin_admin(std::string_view msg_type, std::uint64_t seq, bool wait = false) noexcept;
  bool finish_admin(bool store_it = true) noexcept;
  // The message just written ([msg_buf_, +n)) to observer_ (set).
  void report_sent(std::size_t n) noexcept;
  // For a Reject, Logout or BusinessMessageReject answering `answering_`:
  // its routing fields reversed (OnBehalfOf* <-> DeliverTo*, the peer's
  // Sender/Target Sub and Location IDs unless configured), and on FIXT the
  // BusinessMessageReject's ApplVerID.
  void add_answer_routing(codec::MessageWriter& w, std::string_view msg_type) noexcept;
  bool drain_overflow() noexcept;
  // The timer turn proper (on_timer wraps it in passing held bytes on).
  int timer_turn() noexcept;
  // Seals and releases what HeldOutput holds (sync); 1 when bytes went out.
  int pass_held() noexcept;
  // RefreshOnLogon: parks the Logon until the store has reloaded; true when it did.
  bool park_for_refresh(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  int poll_refresh() noexcept;
  void skip_unsure_sent(const codec::FieldIndex& ix) noexcept;
  // Stores a sent message; logs once when the store refuses (full).
  void keep(std::uint64_t seq, std::string_view msg) noexcept;
  void send_heartbeat(std::string_view test_req_id) noexcept;
  void send_test_request() noexcept;
  void send_logout_msg(std::string_view text) noexcept;
  void send_logon_reply(bool reset) noexcept;
  void send_resend_request(std::uint64_t begin, std::uint64_t end) noexcept;
  // Opens the inbound gap from `expected` to seq (the message that showed
  // it; later ones may extend it) and asks for it.
  void open_gap(std::uint64_t expected, std::uint64_t seq) noexcept;
  // While the gap is open: asks again when it has not moved for
  // ResendRequestTimeout; gives up after ResendRequestRetries. Work done.
  int watch_gap(std::int64_t t) noexcept;
  bool send_gap_fill(std::uint64_t seq, std::uint64_t new_seq) noexcept;
  bool resend_one(std::uint64_t seq, std::string_view stored, const codec::FieldIndex& ix) noexcept;
  int pump_resend() noexcept;

  // Reading messages.
  enum class Verdict : unsigned char { process, ignore, queue, stop };
  Verdict check(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void dispatch(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_logon(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_logout_msg(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_resend_request(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_sequence_reset(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_test_request(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_heartbeat(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  // An inbound Reject or BusinessMessageReject: counted, and logged with its
  // RefSeqNum, RefTagID, reason and text at most once a second.
  void on_reject_received(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  // Logs the count of Reject lines held back, once their second is over.
  void flush_suppressed_rejects(std::int64_t t) noexcept;
  bool enqueue(const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void drain_queue() noexcept;
  // The message's number is used up when it was the expected one.
  void consume(const codec::Header& h) noexcept {
    if (h.msg_seq_num == store_.next_target_seq()) store_.set_next_target_seq(h.msg_seq_num + 1);
  }
  [[gnu::cold]] void logout_and_close(std::string_view text) noexcept;  // Logout then disconnect at once
  // A message whose BeginString is not the session's (`is_logout`: a Logout).
  [[gnu::cold]] void wrong_begin_string(std::string_view begin, bool is_logout) noexcept;
  // Logout naming both numbers, then disconnect.
  [[gnu::cold]] void logout_seq_too_low(std::uint64_t expected, std::uint64_t received) noexcept;
  // Ends the session and closes the connection; under a store that holds
  // sends, once what was written (a Logout answer, the last reports) has
  // committed and gone out, or after LogoutTimeout (the rest the peer gets
  // by resend).
  void close(const char* reason) noexcept;
  // The deferred disconnect of close(), at a timer turn; 1 when it happened.
  int finish_close() noexcept;
  void became_active() noexcept;
  void maybe_schedule_reset() noexcept;
  std::int64_t now() const noexcept { return msg_depth_ != 0 ? msg_now_ : clock_.now_ns(); }
  // The peer's silence that brings a TestRequest (and, unanswered for as
  // long again, the disconnect): HeartBtInt x (1 + TestRequestDelayMultiplier).
  std::int64_t test_request_wait_ns() const noexcept {
    return static_cast<std::int64_t>(static_cast<double>(heart_bt_int_) * kNsPerSec * (1.0 + test_request_delay_));
  }
  void handle_message(const codec::Header& h, const codec::FieldIndex& ix) noexcept;

  // Hot: what every inbound message and every timer turn reads, first and
  // together, so that a turn or an order touches a few lines of the session
  // rather than the whole object (32 sessions on a thread do not all fit L1).
  SessionOutput* out_ = nullptr;
  MessageStore& store_;
  Application& app_;
  const Clock& clock_;
  const MessageValidator* validator_ = nullptr;
  // A store that holds sends (postgresql): out_ is this, bound to the
  // connection; it passes bytes on once the store lets them go.
  std::unique_ptr<HeldOutput> held_;
  // The inbound message being handled: Rejects, Logouts and
  // BusinessMessageRejects sent meanwhile answer it (reversed routing).
  const codec::Header* answering_ = nullptr;
  // The clock reading of the inbound message being handled (msg_depth_ > 0;
  // queued messages replayed from inside on_message nest).
  std::int64_t msg_now_ = 0;
  int msg_depth_ = 0;
  std::int32_t heart_bt_int_;
  SessionState state_ = SessionState::disconnected;
  SendResult last_send_ = SendResult::ok;
  bool msg_in_overflow_ = false;
  bool gap_open_ = false;  // gap on our inbound side: we asked for everything from the expected number on
  bool draining_ = false;
  // RefreshOnLogon: the Logon (first in the queue) waits while the store
  // takes and reloads the session; refreshed_ once it did on this connection.
  bool refreshing_ = false;
  bool refreshed_ = false;
  bool reached_active_ = false;   // on this connection (for the back-off)
  std::int64_t last_sent_ns_ = 0;
  std::int64_t last_received_ns_ = 0;
  std::int64_t clock_seen_ns_ = 0;  // the clock's last reading (a message's arrival, a timer turn)
  std::int64_t test_request_sent_ns_ = 0;  // 0 = none outstanding
  std::size_t overflow_len_ = 0;
  // Resend being served: [resend_next_, resend_end_] still to go.
  std::uint64_t resend_end_ = 0;
  std::uint64_t rejects_suppressed_ = 0;  // not logged since reject_logged_ns_
  std::size_t queue_head_ = 0;            // first queued entry not yet processed
  std::size_t queue_count_ = 0;           // queued entries in use (from 0)
  std::size_t invalid_tag_len_ = 0;
  // The message being written: in claimed room, or in the overflow buffer.
  char* msg_buf_ = nullptr;
  std::uint64_t msg_seq_ = 0;
  SendObserver* observer_ = nullptr;
  // Copies of the settings read per message or per timer turn (settings_
  // spans a dozen lines; these are the few scalars the hot path needs).
  std::size_t send_claim_bytes_;
  double test_request_delay_;
  std::uint32_t max_message_size_;
  std::int32_t max_latency_s_;
  bool check_comp_id_;
  bool check_latency_;
  bool schedule_always_;
  bool store_polls_;  // store_.polls(): timer turns serve it
  // Every inbound message's BeginString and CompIDs are compared with ours
  // where the writer keeps them ("8=" BeginString SOH "9=49=" Sender SOH
  // "56=" Target SOH, its header_text()), when no Sub or Location ID is
  // configured and they fit it (expect_plain_); else with settings_. No copy
  // of their own: the hot members and the writer fill five lines.
  bool expect_plain_ = false;
  std::uint8_t expect_begin_len_ = 0;
  std::uint8_t expect_sender_len_ = 0;
  std::uint8_t expect_target_len_ = 0;
  codec::MessageWriter writer_;

  SessionSettings settings_;
  std::string id_;
  Logger& log_;
  codec::HeaderTemplate header_;
  std::atomic<bool> bound_{false};

  std::unique_ptr<char[]> overflow_;
  std::unique_ptr<char[]> stored_;  // SendClaimBytes: a send_or_store message that could not go out

  std::int64_t state_since_ns_ = 0;
  // (Cold, after the hot lines: declared before them, they moved every hot
  // member off its line.)
  const char* close_reason_ = nullptr;  // close() waits for held bytes (sync): why, and until when
  std::int64_t close_deadline_ns_ = 0;
  std::uint64_t test_request_counter_ = 0;
  char test_req_id_[48] = {};  // "TEST-<UTC ns>-<counter>": unique across restarts too
  std::size_t test_req_id_len_ = 0;
  bool reset_requested_ = false;          // we sent ResetSeqNumFlag=Y in our Logon
  std::int32_t sent_reject_reason_ = -1;  // the Reject being written carries 373 = this

  std::uint64_t resend_next_ = 0;
  std::uint64_t gap_run_start_ = 0;  // first seq of a pending gap-fill run, or 0

  std::uint64_t gap_until_ = 0;  // highest seq seen while the gap is open
  std::uint64_t gap_seen_ = 0;   // the expected seq when the gap last moved (or was asked for)
  std::int64_t gap_moved_ns_ = 0;
  std::uint32_t gap_retries_ = 0;  // ResendRequests sent again for this gap without progress

  // Queued inbound messages while a gap is open: copies of the frames.
  struct Queued {
    std::uint64_t seq;
    std::uint32_t offset;
    std::uint32_t length;
  };
  std::unique_ptr<Queued[]> queue_;
  bool queue_full_logged_ = false;
  std::unique_ptr<char[]> queue_bytes_;
  std::size_t queue_used_ = 0;
  // on_invalid_tag: the frame without its bad field, and the tag as sent
  // while that message is handled (invalid_tag_len_ 0 otherwise).
  std::unique_ptr<char[]> invalid_frame_;
  char invalid_tag_[16] = {};

  // Initiator back-off.
  std::int32_t failures_ = 0;
  std::int64_t last_disconnect_ns_ = 0;
  std::uint64_t garbled_ = 0;
  std::uint64_t rejects_received_ = 0;
  std::int64_t reject_logged_ns_ = 0;
  std::uint64_t stored_unsent_ = 0;
  bool store_full_logged_ = false;
};

}  // namespace kite::session
