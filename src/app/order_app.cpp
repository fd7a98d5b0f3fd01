#include "kite/app/order_app.hpp"

#include <chrono>
#include <cstring>

#include "kite/codec/digits.hpp"
#include "kite/codec/encoder.hpp"
#include "kite/codec/fix.hpp"

namespace kite::app {

namespace tag = codec::tag;
using codec::Decimal;
using codec::Get;
using codec::RejectReason;
using session::SendResult;
using session::Session;

const char* to_string(Mode m) noexcept {
  switch (m) {
    case Mode::ack: return "ack";
    case Mode::match: return "match";
    case Mode::echo: return "echo";
  }
  return "?";
}

bool parse_mode(std::string_view s, Mode& out) noexcept {
  if (s == "ack")
    out = Mode::ack;
  else if (s == "match")
    out = Mode::match;
  else if (s == "echo")
    out = Mode::echo;
  else
    return false;
  return true;
}

IdSource::IdSource() noexcept
    : next_(static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count())) {}

namespace {

// Before FIX.4.3 (4.0-4.2): ExecTransType present, fills as ExecType 1/2.
bool pre_fix43(const Session& s) noexcept {
  const std::string& b = s.settings().begin_string;
  return b.compare(0, 6, "FIX.4.") == 0 && b.size() > 6 && b[6] < '3';
}

Decimal ticks(std::int64_t t) noexcept { return Decimal{t, kPriceExponent}.normalized(); }
Decimal units(std::int64_t q) noexcept { return Decimal{q, 0}; }
// Average price in ticks, rounded half up (integer arithmetic only).
Decimal avg_px(const BookOrder& o) noexcept {
  if (o.cum == 0) return {0, 0};
  return ticks((o.notional * 2 + o.cum) / (o.cum * 2));
}

// The order's status from its quantities.
char status_of(const BookOrder& o) noexcept {
  if (o.leaves == 0 && o.cum > 0) return '2';
  if (o.cum > 0) return '1';
  return '0';
}

// What one ExecutionReport says. The constructor fills what every report
// names; the rest defaults to a new order with nothing filled.
struct Report {
  Report(std::uint64_t order_id, std::uint64_t exec_id, std::string_view cl_ord_id, std::string_view symbol,
         char side) noexcept
      : order_id(order_id), exec_id(exec_id), cl_ord_id(cl_ord_id), symbol(symbol), side(side) {}

  // Quantities and price from the book's view of the order.
  void state_of(const BookOrder& o) noexcept {
    qty = units(o.qty);
    has_price = !o.market;
    price = ticks(o.price);
    leaves = units(o.leaves);
    cum = units(o.cum);
    avg_px = kite::app::avg_px(o);
  }

  std::uint64_t order_id = 0;
  std::uint64_t exec_id = 0;
  std::string_view cl_ord_id;
  std::string_view orig_cl_ord_id;
  std::string_view symbol;
  std::string_view text;
  char side = '1';
  char exec_type = '0';
  char ord_status = '0';
  bool has_price = false;
  Decimal price;
  Decimal qty;
  Decimal leaves;
  Decimal cum;
  Decimal avg_px;
  bool fill = false;
  Decimal last_px;
  Decimal last_qty;
};

// FIX.4.0 and 4.1: LastShares and LastPx required on every report; FIX.4.0
// has no ExecType and no LeavesQty.
bool before_fix42(const Session& s) noexcept { return s.settings().before_fix42(); }

ReportVersion report_version(const Session& s) noexcept {
  return {pre_fix43(s), before_fix42(s), s.settings().begin_string == "FIX.4.0"};
}
SendResult send_report(Session& s, const Report& r, ReportVersion v) noexcept;
SendResult send_report(Session& s, const Report& r) noexcept { return send_report(s, r, report_version(s)); }

void write_report_checked(codec::MessageWriter& w, bool old, bool oldest, bool fix40, const Report& r,
                          std::int64_t now) noexcept;

// The len <= 16 bytes at from, already written in the reserved room, again
// at q as one 16-byte word (16 bytes are free from each; they may overlap,
// hence the word in between): no call for a copy of unknown length.
char* put_short(char* q, const char* from, std::size_t len) noexcept {
  char word[16];
  std::memcpy(word, from, sizeof word);
  std::memcpy(q, word, sizeof word);
  return q + len;
}

// The report's body with one room check: its fields are written unchecked
// into room for their longest rendering (the wide number writers may use
// all of a field's room), or by write_report_checked, field by field, when
// that much is not free: the same bytes, or the same failure.
[[gnu::hot]] void write_report(codec::MessageWriter& w, bool old, bool oldest, bool fix40, const Report& r,
                               std::int64_t now) noexcept {
  namespace put = codec::put;
  // The longest rendering: "tag=" value SOH per field, tags of 3 digits at most.
  constexpr std::size_t kFixed = 2 * (4 + codec::kMaxUintChars)       // 37 17
                                 + 4 * 6                              // 20 150 39 54: one character
                                 + 7 * (5 + codec::kMaxDecimalChars)  // 38 44 32 31 151 14 6
                                 + 4 + codec::kMaxTimestampChars      // 60
                                 + 4 * 4;                             // 11 41 55 58, their values aside
  const std::size_t bound =
      kFixed + r.cl_ord_id.size() + r.orig_cl_ord_id.size() + r.symbol.size() + r.text.size();
  char* q = w.reserve(bound);
  if (q == nullptr) [[unlikely]] {
    write_report_checked(w, old, oldest, fix40, r, now);
    return;
  }
  q = put::text(q, "37=");
  char* const id = q;
  q = codec::write_uint_wide(q, r.order_id);
  const std::string_view order_id(id, static_cast<std::size_t>(q - id));
  q = put::text(q, "\x01" "11=");
  q = put::view(q, r.cl_ord_id);
  if (!r.orig_cl_ord_id.empty()) {
    q = put::text(q, "\x01" "41=");
    q = put::view(q, r.orig_cl_ord_id);
  }
  q = put::text(q, "\x01" "17=");
  if (r.exec_id != r.order_id) {
    q = codec::write_uint_wide(q, r.exec_id);
  } else if (order_id.size() <= 16) {
    q = put_short(q, id, order_id.size());  // an ExecID that is the OrderID
  } else {
    q = put::view(q, order_id);
  }
  if (old) q = put::text(q, "\x01" "20=0");
  if (!fix40) {
    q = put::text(q, "\x01" "150=");
    q = put::chr(q, r.exec_type);
  }
  q = put::text(q, "\x01" "39=");
  q = put::chr(q, r.ord_status);
  q = put::text(q, "\x01" "55=");
  q = put::view(q, r.symbol);
  q = put::text(q, "\x01" "54=");
  q = put::chr(q, r.side);
  q = put::text(q, "\x01" "38=");
  char* const qty = q;
  q = codec::write_decimal_wide(q, r.qty);
  const auto qty_len = static_cast<std::size_t>(q - qty);
  if (r.has_price) {
    q = put::text(q, "\x01" "44=");
    q = codec::write_decimal_wide(q, r.price);
  }
  if (r.fill || oldest) {
    q = put::text(q, "\x01" "32=");
    q = codec::write_decimal_wide(q, r.fill ? r.last_qty : Decimal{0, 0});
    q = put::text(q, "\x01" "31=");
    q = codec::write_decimal_wide(q, r.fill ? r.last_px : Decimal{0, 0});
  }
  if (!fix40) {
    q = put::text(q, "\x01" "151=");
    // A new order's LeavesQty is its OrderQty: those bytes again.
    if (r.leaves.mantissa == r.qty.mantissa && r.leaves.exponent == r.qty.exponent && qty_len <= 16) {
      q = put_short(q, qty, qty_len);
    } else {
      q = codec::write_decimal_wide(q, r.leaves);
    }
  }
  if ((r.cum.mantissa | r.avg_px.mantissa) == 0 && (r.cum.exponent | r.avg_px.exponent) == 0) {
    q = put::text(q, "\x01" "14=0" "\x01" "6=0");  // nothing filled yet: one store
  } else {
    q = put::text(q, "\x01" "14=");
    q = codec::write_decimal_wide(q, r.cum);
    q = put::text(q, "\x01" "6=");
    q = codec::write_decimal_wide(q, r.avg_px);
  }
  q = put::text(q, "\x01" "60=");
  q = w.put_timestamp(q, now);
  if (!r.text.empty()) {
    q = put::text(q, "\x01" "58=");
    q = put::view(q, r.text);
  }
  q = put::chr(q, codec::kSoh);
  w.advance(q);
}

void write_report_checked(codec::MessageWriter& w, bool old, bool oldest, bool fix40, const Report& r,
                          std::int64_t now) noexcept {
  // An order's first report uses its OrderID as ExecID: those (16-digit)
  // digits are rendered once.
  char id[20];
  const std::string_view order_id(id, static_cast<std::size_t>(codec::write_uint(id, r.order_id) - id));
  w.add_string(tag::OrderID, order_id);
  w.add_string(tag::ClOrdID, r.cl_ord_id);
  if (!r.orig_cl_ord_id.empty()) w.add_string(tag::OrigClOrdID, r.orig_cl_ord_id);
  if (r.exec_id == r.order_id)
    w.add_string(tag::ExecID, order_id);
  else
    w.add_uint(tag::ExecID, r.exec_id);
  if (old) w.add_char(tag::ExecTransType, '0');
  if (!fix40) w.add_char(tag::ExecType, r.exec_type);
  w.add_char(tag::OrdStatus, r.ord_status);
  w.add_string(tag::Symbol, r.symbol);
  w.add_char(tag::Side, r.side);
  w.add_decimal(tag::OrderQty, r.qty);
  if (r.has_price) w.add_decimal(tag::Price, r.price);
  if (r.fill || oldest) {
    w.add_decimal(tag::LastQty, r.fill ? r.last_qty : Decimal{0, 0});  // LastShares before FIX.4.3: same tag
    w.add_decimal(tag::LastPx, r.fill ? r.last_px : Decimal{0, 0});
  }
  if (!fix40) w.add_decimal(tag::LeavesQty, r.leaves);
  w.add_decimal(tag::CumQty, r.cum);
  w.add_decimal(tag::AvgPx, r.avg_px);
  w.add_timestamp(tag::TransactTime, now);
  if (!r.text.empty()) w.add_string(tag::Text, r.text);
}

[[gnu::hot]] SendResult send_report(Session& s, const Report& r, ReportVersion v) noexcept {
  const bool old = v.old, oldest = v.oldest, fix40 = v.fix40;
  const std::int64_t now = s.time_ns();  // read once per inbound message
  // A report is never dropped: when it cannot go out now (the resting
  // side's session is slow or gone, or a sweep filled the reply room) it is
  // stored under its number and reaches the peer by resend.
  return s.send_or_store("8", [&](codec::MessageWriter& w) { write_report(w, old, oldest, fix40, r, now); });
}

// Reads the fields a NewOrderSingle must carry; answers a session Reject
// naming the first that is missing or malformed.
struct OrderFields {
  std::string_view cl_ord_id;
  std::string_view symbol;
  char side = 0;
  Decimal qty;
  char ord_type = '2';
  bool has_price = false;
  Decimal price;
};

bool reject_field(Session& s, const codec::Header& h, Get g, std::uint32_t t) noexcept {
  if (g == Get::ok) return false;
  if (g == Get::missing)
    s.send_reject(h.msg_seq_num, h.msg_type, RejectReason::required_tag_missing, t, "Required tag missing");
  else
    s.send_reject(h.msg_seq_num, h.msg_type, RejectReason::incorrect_data_format, t, "Incorrect data format for value");
  return true;
}

[[gnu::hot]] bool read_order(Session& s, const codec::Header& h, const codec::FieldIndex& ix, OrderFields& o) noexcept {
  if (reject_field(s, h, ix.get(tag::ClOrdID, o.cl_ord_id), tag::ClOrdID)) return false;
  if (reject_field(s, h, ix.get(tag::Side, o.side), tag::Side)) return false;
  if (reject_field(s, h, ix.get(tag::Symbol, o.symbol), tag::Symbol)) return false;
  if (reject_field(s, h, ix.get(tag::OrderQty, o.qty), tag::OrderQty)) return false;
  const Get t = ix.get(tag::OrdType, o.ord_type);
  if (t == Get::bad_format && reject_field(s, h, t, tag::OrdType)) return false;
  const Get p = ix.get(tag::Price, o.price);
  if (p == Get::bad_format && reject_field(s, h, p, tag::Price)) return false;
  o.has_price = p == Get::ok;
  return true;
}

// The report of a NewOrderSingle as it came; its ExecID is its OrderID.
Report order_report(std::uint64_t id, const OrderFields& o) noexcept {
  Report r(id, id, o.cl_ord_id, o.symbol, o.side);
  r.qty = o.qty;
  return r;
}

// The report of one fill to the order `o` (its state after the fill) of `who`.
Report fill_report(std::uint64_t exec_id, const Exchange::Live& who, const BookOrder& o, const Fill& f,
                   bool old) noexcept {
  Report r(o.order_id, exec_id, who.cl_ord_id, who.symbol, who.side);
  r.state_of(o);
  r.ord_status = status_of(o);
  r.exec_type = old ? r.ord_status : 'F';
  r.fill = true;
  r.last_px = ticks(f.price);
  r.last_qty = units(f.qty);
  return r;
}

}  // namespace

OrderApplication::OrderApplication(Mode mode, IdSource& ids, Exchange* exchange)
    : mode_(mode), ids_(ids), exchange_(exchange) {
  fills_.reserve(256);
}

ReportVersion OrderApplication::version_of(const Session& s) noexcept {
  if (&s != versioned_) {
    version_ = report_version(s);
    versioned_ = &s;
  }
  return version_;
}

void OrderApplication::on_logon(Session&) noexcept {}

// Echo's ClOrdIDs belong to one session: the next one starts afresh, as a
// conformance acceptor does.
void OrderApplication::on_logout(Session&, const char*) noexcept { seen_cl_ord_ids_.clear(); }

void OrderApplication::count(SendResult r) noexcept {
  if (r == SendResult::stored)
    ++stats_.stored_for_resend;
  else if (r != SendResult::ok)
    ++stats_.send_failures;
}

[[gnu::hot]] void OrderApplication::on_message(Session& s, const codec::Header& h,
                                               const codec::FieldIndex& ix) noexcept {
  if (mode_ == Mode::echo) {
    echo(s, h, ix);
    return;
  }
  if (h.msg_type.size() == 1) {
    switch (h.msg_type[0]) {
      case 'D': on_new_order(s, h, ix); return;
      case 'F': on_cancel(s, h, ix, false); return;
      case 'G': on_cancel(s, h, ix, true); return;
      default: break;
    }
  }
  unsupported(s, h);
}

void OrderApplication::unsupported(Session& s, const codec::Header& h) noexcept {
  ++stats_.rejects;
  const std::string& b = s.settings().begin_string;
  if (b == "FIX.4.0" || b == "FIX.4.1")
    s.send_reject(h.msg_seq_num, h.msg_type, RejectReason::invalid_msg_type, tag::MsgType, "Unsupported message type");
  else
    count(s.send_business_reject(h.msg_seq_num, h.msg_type, 3, "Unsupported message type"));
}

[[gnu::hot]] void OrderApplication::on_new_order(Session& s, const codec::Header& h,
                                                 const codec::FieldIndex& ix) noexcept {
  ++stats_.orders;
  if (mode_ == Mode::match) {
    match_new(s, h, ix);
    return;
  }
  OrderFields o;
  if (!read_order(s, h, ix, o)) {
    ++stats_.rejects;
    return;
  }
  Report r = order_report(ids_.next(), o);
  r.leaves = o.qty;
  r.has_price = o.has_price;
  r.price = o.price;
  r.exec_type = '0';
  r.ord_status = '0';
  ++stats_.reports;
  count(send_report(s, r, version_of(s)));
}

void OrderApplication::on_cancel(Session& s, const codec::Header& h, const codec::FieldIndex& ix,
                                 bool replace) noexcept {
  if (replace)
    ++stats_.replaces;
  else
    ++stats_.cancels;
  std::string_view cl, orig;
  if (reject_field(s, h, ix.get(tag::ClOrdID, cl), tag::ClOrdID) ||
      reject_field(s, h, ix.get(tag::OrigClOrdID, orig), tag::OrigClOrdID)) {
    ++stats_.rejects;
    return;
  }
  if (mode_ == Mode::match) {
    match_cancel(s, ix, cl, orig, replace);
    return;
  }
  // ack: stateless, every cancel and replace is accepted as asked.
  std::string_view symbol;
  char side = '1';
  ix.get(tag::Symbol, symbol);
  ix.get(tag::Side, side);
  const std::uint64_t id = ids_.next();
  Report r(id, id, cl, symbol, side);
  r.orig_cl_ord_id = orig;
  ix.get(tag::OrderQty, r.qty);
  r.has_price = ix.get(tag::Price, r.price) == Get::ok;
  if (replace) {
    r.exec_type = '5';
    r.ord_status = '0';
    r.leaves = r.qty;
  } else {
    r.exec_type = '4';
    r.ord_status = '4';
  }
  ++stats_.reports;
  count(send_report(s, r, version_of(s)));
}

// --- match -----------------------------------------------------------------

void OrderApplication::report_fills(Session& s, const Exchange::Live& in_who, BookOrder in) noexcept {
  const bool old = pre_fix43(s);
  for (const Fill& f : fills_) {
    // The resting side.
    auto it = exchange_->live.find(f.resting_id);
    if (it != exchange_->live.end()) {
      const Exchange::Live& who = it->second;
      ++who.app->stats_.reports;
      who.app->count(send_report(*who.session, fill_report(ids_.next(), who, f.resting, f, pre_fix43(*who.session))));
      if (f.resting.leaves == 0) {
        who.app->open_orders_.erase(who.cl_ord_id);
        exchange_->live.erase(it);
      }
    }
    // The incoming side, one report per fill.
    in.leaves -= f.qty;
    in.cum += f.qty;
    in.notional += f.qty * f.price;
    ++stats_.reports;
    count(send_report(s, fill_report(ids_.next(), in_who, in, f, old)));
  }
}

void OrderApplication::match_new(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept {
  OrderFields o;
  if (!read_order(s, h, ix, o)) {
    ++stats_.rejects;
    return;
  }
  Report rej = order_report(ids_.next(), o);
  rej.exec_type = '8';
  rej.ord_status = '8';
  const auto reject = [&](std::string_view why) {
    rej.text = why;
    ++stats_.reports;
    count(send_report(s, rej));
  };
  BookOrder b;
  if (o.side == '1')
    b.side = Side::buy;
  else if (o.side == '2')
    b.side = Side::sell;
  else
    return reject("Unsupported Side");
  if (!o.qty.scaled_to(0, b.qty) || b.qty <= 0) return reject("OrderQty must be a positive whole number");
  if (o.ord_type == '1') {
    b.market = true;
  } else if (o.ord_type == '2') {
    if (!o.has_price) return reject("Limit order without Price");
    if (!o.price.scaled_to(kPriceExponent, b.price) || b.price <= 0) return reject("Price off the tick grid");
  } else {
    return reject("Unsupported OrdType");
  }
  b.order_id = rej.order_id;
  b.leaves = b.qty;

  std::lock_guard<std::mutex> lock(exchange_->mu);
  if (open_orders_.count(std::string(o.cl_ord_id)) != 0) return reject("Duplicate ClOrdID");
  OrderBook& book = exchange_->books.try_emplace(std::string(o.symbol)).first->second;
  Exchange::Live who{this, &s, std::string(o.cl_ord_id), std::string(o.symbol), o.side};

  Report r(b.order_id, ids_.next(), o.cl_ord_id, o.symbol, o.side);
  r.state_of(b);
  r.exec_type = '0';
  r.ord_status = '0';
  ++stats_.reports;
  count(send_report(s, r));

  fills_.clear();
  const BookOrder after = book.add(b, fills_);
  report_fills(s, who, b);
  if (after.leaves > 0 && b.market) {
    // A market order never rests: what found no liquidity is canceled.
    Report c = r;
    c.exec_id = ids_.next();
    c.exec_type = '4';
    c.ord_status = '4';
    c.leaves = units(0);
    c.cum = units(after.cum);
    c.avg_px = avg_px(after);
    c.text = "No liquidity";
    ++stats_.reports;
    count(send_report(s, c));
  } else if (after.leaves > 0) {
    open_orders_.emplace(who.cl_ord_id, b.order_id);
    exchange_->live.emplace(b.order_id, std::move(who));
  }
}

void OrderApplication::match_cancel(Session& s, const codec::FieldIndex& ix, std::string_view cl, std::string_view orig,
                                    bool replace) noexcept {
  std::lock_guard<std::mutex> lock(exchange_->mu);
  const auto cancel_reject = [&](std::string_view why, char status) {
    ++stats_.cancel_rejects;
    count(s.send("9", [&](codec::MessageWriter& w) {
      w.add_string(tag::OrderID, "NONE");
      w.add_string(tag::ClOrdID, cl);
      w.add_string(tag::OrigClOrdID, orig);
      w.add_char(tag::OrdStatus, status);
      w.add_char(tag::CxlRejResponseTo, replace ? '2' : '1');
      w.add_char(tag::CxlRejReason, '1');  // unknown order
      w.add_string(tag::Text, why);
    }));
  };
  auto mine = open_orders_.find(std::string(orig));
  if (mine == open_orders_.end()) return cancel_reject("Unknown order", '8');
  const std::uint64_t id = mine->second;
  auto live = exchange_->live.find(id);
  if (live == exchange_->live.end()) return cancel_reject("Unknown order", '8');
  Exchange::Live& who = live->second;
  OrderBook& book = exchange_->books[who.symbol];
  const BookOrder* cur = book.find(id);
  if (cur == nullptr) return cancel_reject("Unknown order", '8');

  Report r(id, ids_.next(), cl, who.symbol, who.side);
  r.orig_cl_ord_id = orig;

  if (!replace) {
    BookOrder gone;
    book.cancel(id, &gone);
    gone.leaves = 0;  // as reported: nothing left open
    r.state_of(gone);
    r.exec_type = '4';
    r.ord_status = '4';
    ++stats_.reports;
    count(send_report(s, r));
    open_orders_.erase(mine);
    exchange_->live.erase(live);
    return;
  }

  Decimal qty_d, px_d;
  std::int64_t qty = cur->qty, px = cur->price;
  if (ix.get(tag::OrderQty, qty_d) == Get::ok && (!qty_d.scaled_to(0, qty) || qty <= 0))
    return cancel_reject("OrderQty must be a positive whole number", status_of(*cur));
  if (ix.get(tag::Price, px_d) == Get::ok && (!px_d.scaled_to(kPriceExponent, px) || px <= 0))
    return cancel_reject("Price off the tick grid", status_of(*cur));
  if (qty <= cur->cum) return cancel_reject("OrderQty not above the filled quantity", status_of(*cur));

  const BookOrder before = *cur;
  BookOrder after;
  fills_.clear();
  book.replace(id, qty, px, fills_, &after);
  // The order now answers to the new ClOrdID.
  open_orders_.erase(mine);
  who.cl_ord_id.assign(cl);
  BookOrder reported = before;
  reported.qty = qty;
  reported.price = px;
  reported.leaves = qty - before.cum;
  r.state_of(reported);
  r.exec_type = '5';
  r.ord_status = status_of(reported);
  ++stats_.reports;
  count(send_report(s, r));
  const Exchange::Live in_who = who;  // report_fills may erase resting entries, not this one
  report_fills(s, in_who, reported);
  if (after.leaves > 0) {
    open_orders_.emplace(std::string(cl), id);
  } else {
    exchange_->live.erase(id);
  }
}

// --- echo ------------------------------------------------------------------

void OrderApplication::echo(Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept {
  const bool order = h.msg_type == "D";
  if (!order && h.msg_type != "d") {
    unsupported(s, h);
    return;
  }
  if (order) {
    std::string_view cl;
    if (ix.get(tag::ClOrdID, cl) == Get::ok) {
      const bool fresh = seen_cl_ord_ids_.emplace(cl).second;
      if (!fresh && h.poss_resend) {
        ++stats_.dropped_resends;
        return;
      }
    }
  }
  // The body: from the first field that is not a header field to CheckSum.
  const std::uint32_t n = ix.size();
  std::uint32_t first = 3;
  while (first < n) {
    const std::uint32_t t = ix[first].tag;
    const bool header = t == tag::SenderCompID || t == tag::TargetCompID || t == tag::MsgSeqNum ||
                        t == tag::SendingTime || t == tag::PossDupFlag || t == tag::PossResend ||
                        t == tag::OrigSendingTime || t == tag::SenderSubID || t == tag::TargetSubID ||
                        t == tag::SenderLocationID || t == tag::TargetLocationID || t == tag::OnBehalfOfCompID ||
                        t == tag::OnBehalfOfSubID || t == tag::OnBehalfOfLocationID || t == tag::DeliverToCompID ||
                        t == tag::DeliverToSubID || t == tag::DeliverToLocationID || t == tag::ApplVerID ||
                        t == tag::LastMsgSeqNumProcessed || t == tag::SecureDataLen || t == tag::SecureData ||
                        t == 1129 /* CstmApplVerID */ || t == 1156 /* ApplExtID */ || t == 347 /* MessageEncoding */;
    if (!header) break;
    ++first;
  }
  std::string_view body;
  if (first + 1 < n && ix[n - 1].tag == tag::CheckSum) {
    const std::string_view frame = ix.frame();
    const codec::FieldRef& prev = ix[first - 1];
    const std::size_t begin = prev.offset + prev.length + 1;
    const std::size_t end = ix[n - 1].offset - 3;  // "10="
    if (end > begin) body = frame.substr(begin, end - begin);
  }
  ++stats_.echoed;
  count(s.send(h.msg_type, [&](codec::MessageWriter& w) {
    if (h.poss_resend) w.add_bool(tag::PossResend, true);
    w.add_raw(body);
  }));
}

}  // namespace kite::app
