// The order-entry application: what a Kite acceptor answers to orders.
//
// One OrderApplication is made per session (registry.add(settings, app)), so
// per-session state (echo's ClOrdIDs) needs no lock. Modes:
//
//   ack    NewOrderSingle (D) -> ExecutionReport ExecType=New, OrdStatus=New;
//          OrderCancelRequest (F) -> ExecutionReport Canceled; Replace (G) ->
//          ExecutionReport Replaced. Stateless, and allocation-free per order:
//          the latency benchmark's mode.
//   match  a price-time order book per symbol (OrderBook, shared by every
//          session through an Exchange). Limit and market orders; crossing
//          orders fill at the resting order's price, partial fills included;
//          the resting side's session gets its ExecutionReport too. Cancel and
//          replace of a live order are answered with ExecutionReport
//          Canceled/Replaced, of an unknown or finished one with
//          OrderCancelReject (CxlRejReason 1 = unknown order). Prices are
//          integer ticks (codec::Decimal scaled to 10^-kPriceExponent), never
//          double; a price off the tick grid is rejected (ExecType=Rejected).
//   echo   the way conformance-test acceptors behave: each NewOrderSingle and
//          SecurityDefinition (d) is sent back with the same body (and
//          PossResend=Y when it carried it); a PossResend=Y order whose
//          ClOrdID was already seen in that session (since its Logon) is
//          dropped; any other application message gets a
//          BusinessMessageReject (3 = unsupported message type), or a session
//          Reject (11 = invalid MsgType) before FIX.4.2.
//
// A NewOrderSingle lacking ClOrdID, Side, Symbol or OrderQty (or a value that
// does not parse) gets a session Reject naming the tag (ack and match).
//
// Version differences handled: FIX.4.2 ExecutionReports carry ExecTransType
// (20=0) and report fills as ExecType 1/2 (partial/fill); FIX.4.4 and
// FIXT.1.1/FIX.5.0SP2 report them as ExecType F (Trade) and have no
// ExecTransType. LastShares (4.2) and LastQty (4.4+) are the same tag 32.
//
// ExecutionReports are never dropped: one that cannot go out when it is made
// (the resting side's session is slow, disconnected or logged out, or a
// sweep used up the reply's room) is stored under its MsgSeqNum
// (Session::send_or_store) and reaches the peer by resend.
//
// Threading: the session calls its application from the thread that owns its
// connection. In match mode a fill may answer another session, so every
// session of an Exchange must run on one thread (the daemon requires the
// mono or single model, or one worker); the Exchange itself is locked only so
// that a misuse is a data race on the sessions, never on the books.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kite/codec/field_index.hpp"
#include "kite/codec/header.hpp"
#include "kite/codec/values.hpp"
#include "kite/session/session.hpp"

namespace kite::app {

enum class Mode : unsigned char { ack, match, echo };
const char* to_string(Mode m) noexcept;
// "ack" | "match" | "echo"; false otherwise.
bool parse_mode(std::string_view s, Mode& out) noexcept;

// Prices are kept as integer ticks of 10^kPriceExponent.
inline constexpr std::int32_t kPriceExponent = -4;

enum class Side : unsigned char { buy, sell };

// --- the book: pure data structure, no FIX, no session -----------------------

// One resting or incoming order as the book sees it.
struct BookOrder {
  std::uint64_t order_id = 0;
  Side side = Side::buy;
  bool market = false;        // no price: crosses anything, never rests
  std::int64_t price = 0;     // ticks (limit orders)
  std::int64_t qty = 0;       // OrderQty
  std::int64_t leaves = 0;    // still open
  std::int64_t cum = 0;       // filled so far
  std::int64_t notional = 0;  // sum of fill price (ticks) x fill qty, for AvgPx
};

// A match between an incoming order and a resting one, at the resting price.
struct Fill {
  std::uint64_t resting_id = 0;
  std::int64_t price = 0;  // ticks
  std::int64_t qty = 0;
  BookOrder resting;  // the resting order after this fill (leaves 0: gone)
};

// Price-time priority book of one symbol. Bids best (highest) first, asks best
// (lowest) first; within a price, oldest first. Orders are owned by the book
// and addressed by order_id.
class OrderBook {
 public:
  // Matches `incoming` against the opposite side (updating both orders),
  // appending each fill to `fills`; rests what is left of a limit order.
  // Returns the incoming order's state after matching (leaves 0: done).
  BookOrder add(const BookOrder& incoming, std::vector<Fill>& fills);
  // The live order with this id, or nullptr.
  const BookOrder* find(std::uint64_t order_id) const noexcept;
  // Removes a live order; false when it is not in the book.
  bool cancel(std::uint64_t order_id, BookOrder* removed = nullptr);
  // Replace: new quantity (total, must exceed the filled part) and price.
  // The order loses its time priority when the price changes or the
  // quantity goes up, keeps it when only the quantity goes down; a replace
  // that now crosses matches like a new order (fills appended). False when
  // the order is unknown or new_qty <= cum.
  bool replace(std::uint64_t order_id, std::int64_t new_qty, std::int64_t new_price, std::vector<Fill>& fills,
               BookOrder* after = nullptr);
  // Best prices (false when that side is empty) and depth, for tests.
  bool best_bid(std::int64_t& px) const noexcept;
  bool best_ask(std::int64_t& px) const noexcept;
  std::size_t size() const noexcept { return orders_.size(); }
  // Resting orders' ids at a price level of a side, in time priority.
  std::vector<std::uint64_t> level(Side side, std::int64_t price) const;

 private:
  using Level = std::deque<std::uint64_t>;  // order ids, oldest first
  BookOrder match(BookOrder o, std::vector<Fill>& fills);
  void rest(const BookOrder& o);
  void unlink(const BookOrder& o);
  std::map<std::int64_t, Level, std::greater<>> bids_;
  std::map<std::int64_t, Level> asks_;
  std::unordered_map<std::uint64_t, BookOrder> orders_;
};

// --- shared state -----------------------------------------------------------

// Order and execution IDs, unique per process run (seeded from the start
// time so that a restarted daemon does not reuse them).
class IdSource {
 public:
  IdSource() noexcept;
  explicit IdSource(std::uint64_t first) noexcept : next_(first) {}
  std::uint64_t next() noexcept { return next_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> next_;
};

class OrderApplication;

// What an ExecutionReport's layout depends on in the session's BeginString.
struct ReportVersion {
  bool old = false;     // before FIX.4.3: ExecTransType, fills as ExecType 1/2
  bool oldest = false;  // FIX.4.0/4.1: LastShares and LastPx on every report
  bool fix40 = false;   // no ExecType, no LeavesQty
};

// Match mode's books, one per symbol, and the live orders' FIX identity.
class Exchange {
 public:
  struct Live {
    OrderApplication* app = nullptr;  // the session's application
    session::Session* session = nullptr;
    std::string cl_ord_id;
    std::string symbol;
    char side = '1';
  };
  std::mutex mu;
  std::map<std::string, OrderBook, std::less<>> books;
  std::unordered_map<std::uint64_t, Live> live;  // by order_id
};

// Counters of one application (one session), for tests and the daemon's log.
struct AppStats {
  std::uint64_t orders = 0;             // NewOrderSingle handled
  std::uint64_t cancels = 0;            // OrderCancelRequest handled
  std::uint64_t replaces = 0;           // OrderCancelReplaceRequest handled
  std::uint64_t reports = 0;            // ExecutionReports sent (all sessions' fills included)
  std::uint64_t cancel_rejects = 0;     // OrderCancelReject sent
  std::uint64_t rejects = 0;            // session Rejects / BusinessMessageRejects sent
  std::uint64_t echoed = 0;             // echo mode: messages sent back
  std::uint64_t dropped_resends = 0;    // echo mode: PossResend duplicates dropped
  std::uint64_t send_failures = 0;      // a send that did not go out (not logged on, back-pressure)
  std::uint64_t stored_for_resend = 0;  // ExecutionReports that could not go out: stored, sent on resend
};

class alignas(64) OrderApplication final : public session::Application {
 public:
  // `ids` and (match mode) `exchange` are shared by the applications of all
  // sessions and must outlive them.
  OrderApplication(Mode mode, IdSource& ids, Exchange* exchange = nullptr);

  void on_logon(session::Session& s) noexcept override;
  void on_logout(session::Session& s, const char* reason) noexcept override;
  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override;

  Mode mode() const noexcept { return mode_; }
  const AppStats& stats() const noexcept { return stats_; }
  AppStats& stats() noexcept { return stats_; }

 private:
  void on_new_order(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void on_cancel(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix, bool replace) noexcept;
  void match_new(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  // The order named by `orig` (OrigClOrdID) canceled, or replaced under `cl`.
  void match_cancel(session::Session& s, const codec::FieldIndex& ix, std::string_view cl, std::string_view orig,
                    bool replace) noexcept;
  void echo(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept;
  void unsupported(session::Session& s, const codec::Header& h) noexcept;
  // ExecutionReports for each fill of fills_: to the resting orders' sessions
  // and to `s` for the incoming order `in` (whose running state is updated).
  void report_fills(session::Session& s, const Exchange::Live& in_who, BookOrder in) noexcept;
  void count(session::SendResult r) noexcept;
  // The report layout of `s`'s version, kept for the last session asked
  // (this application's own): its settings are not read per order.
  ReportVersion version_of(const session::Session& s) noexcept;

  // What an order in ack mode reads and counts, in the first line.
  Mode mode_;
  ReportVersion version_;  // of versioned_
  const session::Session* versioned_ = nullptr;
  IdSource& ids_;
  AppStats stats_;
  Exchange* exchange_;
  std::unordered_set<std::string> seen_cl_ord_ids_;             // echo mode, this session
  std::unordered_map<std::string, std::uint64_t> open_orders_;  // match: ClOrdID -> order_id (under Exchange::mu)
  std::vector<Fill> fills_;                                     // scratch, reserved once
};

}  // namespace kite::app
