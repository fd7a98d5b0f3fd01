#include "kite/app/initiator_daemon.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kite/app/tls_config.hpp"
#include "kite/codec/codec.hpp"
#include "kite/codec/fix.hpp"
#include "kite/session/session.hpp"
#include "kite/session/validation.hpp"
#include "kite/util/dictionary_dir.hpp"
#include "kite/util/toml_reader.hpp"

#include "config_file.hpp"

namespace kite::app {

using detail::Setting;
using detail::Table;
using session::ConfigError;

namespace {

bool parse_side(std::string_view s, char& out) {
  if (s == "1" || s == "buy")
    out = '1';
  else if (s == "2" || s == "sell")
    out = '2';
  else
    return false;
  return true;
}

// [orders] being read: the source, and where a relative order file is.
struct OrdersReading {
  OrderSourceConfig& o;
  std::string dir;
  const toml::node* source = nullptr;
};

using OR = OrdersReading;
const util::Key<OR> kOrders[] = {
    {"source",
     [](OR& r, const Setting& s) {
       r.source = &s.node;
       const std::string v = s.string();
       if (v == "none")
         r.o.kind = OrderSourceConfig::Kind::none;
       else if (v == "rate")
         r.o.kind = OrderSourceConfig::Kind::rate;
       else if (v == "file")
         r.o.kind = OrderSourceConfig::Kind::file;
       else
         s.fail("expected \"none\", \"rate\" or \"file\", got \"" + v + "\"");
     }},
    {"rate",
     [](OR& r, const Setting& s) {
       const auto d = s.node.value<double>();
       if (!d || !(*d >= 0) || *d > 1e7) s.fail("expected orders per second per session, 0 to 10000000");
       r.o.rate = *d;
     }},
    {"report_interval_s",
     [](OR& r, const Setting& s) { r.o.report_interval_s = static_cast<int>(s.integer(0, 86400)); }},
    {"count",
     [](OR& r, const Setting& s) { r.o.count = static_cast<std::uint64_t>(s.integer(0, std::int64_t{1} << 50)); }},
    {"file",
     [](OR& r, const Setting& s) {
       r.o.file = s.string();
       if (!r.o.file.empty() && r.o.file[0] != '/' && !r.dir.empty()) r.o.file = r.dir + "/" + r.o.file;
     }},
    {"symbol",
     [](OR& r, const Setting& s) {
       r.o.order.symbol = s.string();
       if (r.o.order.symbol.empty()) s.fail("empty symbol");
     }},
    {"side",
     [](OR& r, const Setting& s) {
       if (!parse_side(s.string(), r.o.order.side)) s.fail("expected \"buy\" or \"sell\"");
     }},
    {"quantity", [](OR& r, const Setting& s) { r.o.order.quantity = s.integer(1, std::int64_t{1} << 40); }},
    {"price",
     [](OR& r, const Setting& s) {
       const std::string p = s.string();
       if (!codec::parse_decimal(p, r.o.order.price) || r.o.order.price.mantissa <= 0)
         s.fail("expected a positive decimal such as \"10.25\", got \"" + p + "\"");
     }},
};

void read_orders(OrderSourceConfig& o, const Setting& table, const std::string& dir) {
  OrdersReading r{o, dir, nullptr};
  detail::read_section(r, table, kOrders);
  const util::TomlReader& reader = table.reader;
  if (o.kind == OrderSourceConfig::Kind::rate && o.rate <= 0)
    reader.fail(r.source != nullptr ? *r.source : table.node, "[orders]: setting rate",
                "source \"rate\" needs a rate above 0");
  if (o.kind == OrderSourceConfig::Kind::file) {
    if (o.file.empty()) reader.fail(*r.source, "[orders]: setting file", "source \"file\" needs file");
    std::ifstream in(o.file);
    if (!in) reader.fail(*r.source, "[orders]: setting file", "cannot read \"" + o.file + "\"");
    std::stringstream ss;
    ss << in.rdbuf();
    o.lines = parse_order_lines(ss.str(), o.file);
    if (o.lines.empty()) reader.fail(*r.source, "[orders]: setting file", "\"" + o.file + "\" holds no order");
  }
}

// The one order writer: what a session sends (OrderFlow) and what the load
// checks against the dictionary.
void write_order(codec::MessageWriter& w, const OrderShape& shape, std::string_view cl_ord_id, const OrderLine& o,
                 std::int64_t now_ns) noexcept {
  w.add_string(codec::tag::ClOrdID, cl_ord_id);
  if (shape.handl_inst) w.add_char(codec::tag::HandlInst, '1');  // automated, no broker intervention
  w.add_string(codec::tag::Symbol, o.symbol);
  w.add_char(codec::tag::Side, o.side);
  if (shape.transact_time) w.add_timestamp(codec::tag::TransactTime, now_ns);
  w.add_int(codec::tag::OrderQty, o.quantity);
  w.add_char(codec::tag::OrdType, '2');
  w.add_decimal(codec::tag::Price, o.price);
}

// Session s's NewOrderSingle as its dictionary defines it; every order of the
// source is written and validated as it would be sent.
OrderShape check_orders(const session::SessionSettings& s, const OrderSourceConfig& o, const std::string& where) {
  session::SessionSettings d = s;
  if (d.data_dictionary.empty()) d.data_dictionary = util::dictionary_dir();
  std::unique_ptr<session::DictionaryValidator> v;
  try {
    v = session::DictionaryValidator::for_settings(d);
  } catch (const std::exception& e) {
    throw ConfigError(where + "the order check needs the session's dictionary: " + e.what());
  }
  const codec::MessageDef* m = v->dictionary().message("D");
  if (m == nullptr) throw ConfigError(where + "its dictionary (" + d.data_dictionary + ") has no NewOrderSingle (D)");
  OrderShape shape;
  shape.handl_inst = m->body.contains(codec::tag::HandlInst);
  shape.transact_time = m->body.contains(codec::tag::TransactTime);
  static constexpr std::uint32_t kFilled[] = {codec::tag::ClOrdID, codec::tag::HandlInst,    codec::tag::Symbol,
                                              codec::tag::Side,    codec::tag::TransactTime, codec::tag::OrderQty,
                                              codec::tag::OrdType, codec::tag::Price};
  for (const std::uint32_t pos : m->body.required()) {
    const std::uint32_t t = m->body.members()[pos].tag;
    if (std::find(std::begin(kFilled), std::end(kFilled), t) != std::end(kFilled)) continue;
    const codec::FieldDef* f = v->dictionary().field(t);
    throw ConfigError(where + "its dictionary requires tag " + std::to_string(t) + " (" +
                      (f != nullptr ? std::string(f->name) : std::string("?")) +
                      ") on NewOrderSingle, which kite-initiator does not fill");
  }
  codec::HeaderFields hf;
  hf.begin_string = s.begin_string;
  hf.sender_comp_id = s.sender_comp_id;
  hf.target_comp_id = s.target_comp_id;
  hf.sender_sub_id = s.sender_sub_id;
  hf.target_sub_id = s.target_sub_id;
  hf.sender_location_id = s.sender_location_id;
  hf.target_location_id = s.target_location_id;
  const codec::HeaderTemplate header(hf);
  codec::MessageWriter w(header, s.timestamp_precision);
  std::vector<char> buf(4096 + 2 * s.sender_comp_id.size());
  codec::FieldIndex ix;
  const std::int64_t now = codec::utc_now_ns();
  const std::string id = s.sender_comp_id.substr(0, 40) + "-2";
  const auto check = [&](const OrderLine& line) {
    w.begin(buf.data(), buf.size(), "D", 2, now);
    write_order(w, shape, id, line, now);
    const std::size_t n = w.finish();
    codec::Header h;
    session::Validation r{false, codec::RejectReason::other, 0, "the order does not fit 4 KiB"};
    if (n != 0 && ix.build(buf.data(), n) && codec::read_header(ix, h)) r = v->validate(h, ix);
    if (r.ok) return;
    const std::string at = line.line != 0 ? o.file + ":" + std::to_string(line.line) + ": " : "[orders]: ";
    throw ConfigError(at + s.id() + "'s dictionary refuses this NewOrderSingle: " + r.text + "; nothing is sent");
  };
  if (o.kind == OrderSourceConfig::Kind::file)
    for (const OrderLine& line : o.lines) check(line);
  else
    check(o.order);
  return shape;
}

// What reading the tables fills.
struct Reading {
  InitiatorDaemonConfig& c;
  std::string dir;  // the file's folder as its name gives it: [orders] file is relative to it
};

const util::Key<InitiatorDaemonConfig> kApp[] = {
    {"shutdown_wait_ms",
     [](InitiatorDaemonConfig& c, const Setting& s) { c.shutdown_wait_ms = detail::shutdown_wait_ms(s); }},
};

const Table<Reading> kEngine = {"engine", [](Reading& r, const Setting& t) {
                                  detail::read_section(r.c.engine, t, detail::initiator_engine_keys());
                                }};
const Table<Reading> kDaemonTables[] = {
    kEngine,
    {"orders", [](Reading& r, const Setting& t) { read_orders(r.c.orders, t, r.dir); }},
    {"app", [](Reading& r, const Setting& t) { detail::read_section(r.c, t, kApp); }},
    {"log", [](Reading& r, const Setting& t) { detail::read_section(r.c.log_format, t, detail::log_keys()); }},
};
// libkite's initiator: the caller's code sends the orders and decides how long to wait.
const Table<Reading> kLibraryTables[] = {kEngine};

// Who reads the file: the name its messages give the program, and its tables.
struct Reader {
  const char* program;
  std::span<const Table<Reading>> tables;
};

InitiatorDaemonConfig read(const detail::ConfigFile& f, const Reader& who) {
  InitiatorDaemonConfig c;
  const std::string& name = f.reader.file();
  c.engine.idle = {engine::IdleKind::block, 0, 1000};
  const std::size_t slash = name.rfind('/');
  Reading r{c, slash == std::string::npos ? "" : name.substr(0, slash)};
  detail::read_tables(r, f, who.tables);
  check_tls_table(f.document, f.reader, c.engine.transport == transport::Kind::tls,
                  transport::to_string(c.engine.transport));
  c.sessions = f.sessions();
  if (c.sessions.sessions.empty()) throw ConfigError(name + ": no [[session]]");
  if (const toml::node* t = f.document.get("tls")) {
    if (t->as_table() == nullptr) f.reader.fail(*t, "[tls]", "must be a table");
    // The host name checked by default: the first session's (the engine has one TLS context).
    const std::string& host = c.sessions.sessions[0].socket_connect_host;
    read_tls_table(*t->as_table(), f.reader, transport::TlsRole::client, host.empty() ? "127.0.0.1" : host,
                   c.engine.tls);
  }
  std::size_t i = 0;
  for (const session::SessionSettings& s : c.sessions.sessions) {
    ++i;
    const std::string where = "session " + std::to_string(i) + " (" + s.id() + "): setting ";
    if (s.role != session::Role::initiator)
      f.reader.fail(where + "ConnectionType",
                    std::string(who.program) + " runs initiator sessions only (ConnectionType = \"initiator\")");
    if (s.socket_connect_port == 0) f.reader.fail(where + "SocketConnectPort", "missing (the acceptor's port)");
    if (c.orders.kind != OrderSourceConfig::Kind::none)
      c.orders.shapes.push_back(
          check_orders(s, c.orders, name + ": session " + std::to_string(i) + " (" + s.id() + "): "));
  }
  return c;
}

const Reader kDaemon{"kite-initiator", kDaemonTables};
const Reader kLibrary{"libkite's initiator", kLibraryTables};

}  // namespace

OrderShape OrderShape::for_version(std::string_view begin_string) noexcept {
  OrderShape shape;
  shape.handl_inst =
      begin_string == "FIX.4.0" || begin_string == "FIX.4.1" || begin_string == "FIX.4.2" || begin_string == "FIX.4.3";
  shape.transact_time = begin_string != "FIX.4.0" && begin_string != "FIX.4.1";
  return shape;
}

std::vector<OrderLine> parse_order_lines(std::string_view text, const std::string& name) {
  std::vector<OrderLine> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty() || line.front() == '#') continue;
    const auto bad = [&](const std::string& why) {
      throw ConfigError(name + ":" + std::to_string(line_no) + ": " + why +
                        " (expected \"side,symbol,quantity,price\", "
                        "such as \"buy,KITE,100,10.25\")");
    };
    std::string_view f[4];
    int n = 0;
    for (std::string_view rest = line; n < 4; ++n) {
      const std::size_t comma = rest.find(',');
      f[n] = rest.substr(0, comma);
      if (comma == std::string_view::npos) {
        rest = {};
        ++n;
        if (n < 4) bad(std::to_string(n) + " field(s)");
        break;
      }
      rest = rest.substr(comma + 1);
      if (n == 3) bad("more than 4 fields");
    }
    OrderLine o;
    o.line = line_no;
    if (!parse_side(f[0], o.side)) bad("side \"" + std::string(f[0]) + "\" is not buy, sell, 1 or 2");
    if (f[1].empty()) bad("empty symbol");
    o.symbol = std::string(f[1]);
    std::uint64_t q = 0;
    if (!codec::parse_uint(f[2], q) || q == 0) bad("quantity \"" + std::string(f[2]) + "\" is not a positive integer");
    o.quantity = static_cast<std::int64_t>(q);
    if (!codec::parse_decimal(f[3], o.price) || o.price.mantissa <= 0)
      bad("price \"" + std::string(f[3]) + "\" is not a positive decimal");
    out.push_back(std::move(o));
  }
  return out;
}

InitiatorDaemonConfig load_initiator_config(const std::string& path) {
  return read(detail::ConfigFile::load(path), kDaemon);
}

InitiatorDaemonConfig parse_initiator_config(std::string_view text, const std::string& name) {
  return read(detail::ConfigFile::parse(text, name), kDaemon);
}

InitiatorDaemonConfig parse_library_initiator_config(std::string_view text, const std::string& name) {
  return read(detail::ConfigFile::parse(text, name), kLibrary);
}

// --- the order source ---------------------------------------------------------

struct OrderFlow::PerSession final : session::Application {
  static constexpr std::size_t kPlanned = 1 << 16;  // orders in flight whose planned time is kept
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> reports{0};
  std::unique_ptr<std::int64_t[]> planned{new std::int64_t[kPlanned]()};  // by the order's MsgSeqNum
  std::unique_ptr<std::atomic<std::uint64_t>[]> latency { new std::atomic<std::uint64_t>[ kBuckets ]() };
  std::uint64_t sent_before = 0;  // sent when this Logon came: the rate counts from it
  std::int64_t logon_ns = 0;
  std::size_t next_line = 0;  // file: the next order to send
  char cl_ord_id[64] = {};
  std::size_t prefix = 0;
  OrderShape shape;

  void on_logon(session::Session& s) noexcept override {
    logon_ns = s.time_ns();
    sent_before = sent.load(std::memory_order_relaxed);
  }
  void on_logout(session::Session&, const char*) noexcept override { logon_ns = 0; }
  void on_message(session::Session& s, const codec::Header& h, const codec::FieldIndex& ix) noexcept override {
    if (h.msg_type != "8") return;
    reports.fetch_add(1, std::memory_order_relaxed);
    // ClOrdID "<SenderCompID>-<MsgSeqNum>": the order's planned time.
    std::string_view id;
    if (ix.get(codec::tag::ClOrdID, id) != codec::Get::ok) return;
    const std::size_t dash = id.rfind('-');
    std::uint64_t seq = 0;
    if (dash == std::string_view::npos || !codec::parse_uint(id.substr(dash + 1), seq)) return;
    std::int64_t& t = planned[seq & (kPlanned - 1)];
    if (t == 0) return;  // answered already, or not ours
    const std::int64_t us = (s.time_ns() - t) / 1000;
    t = 0;
    latency[bucket_of(us < 0 ? 0 : us)].fetch_add(1, std::memory_order_relaxed);
  }
};

OrderFlow::OrderFlow(const OrderSourceConfig& config, std::size_t sessions) : config_(config) {
  for (std::size_t i = 0; i < sessions; ++i) per_.push_back(std::make_unique<PerSession>());
}

OrderFlow::~OrderFlow() = default;

session::Application& OrderFlow::application(std::size_t i, const session::SessionSettings& s) {
  PerSession& p = *per_.at(i);
  const std::string prefix = s.sender_comp_id.substr(0, 40) + "-";
  std::memcpy(p.cl_ord_id, prefix.data(), prefix.size());
  p.prefix = prefix.size();
  p.shape = i < config_.shapes.size() ? config_.shapes[i] : OrderShape::for_version(s.begin_string);
  return p;
}

std::uint64_t OrderFlow::sent(std::size_t i) const noexcept { return per_[i]->sent.load(std::memory_order_relaxed); }
std::uint64_t OrderFlow::reports(std::size_t i) const noexcept {
  return per_[i]->reports.load(std::memory_order_relaxed);
}

int OrderFlow::on_timer(std::size_t i, session::Session& s) noexcept {
  if (config_.kind == OrderSourceConfig::Kind::none || !s.logged_on()) return 0;
  PerSession& p = *per_[i];
  if (p.logon_ns == 0) return 0;
  const std::uint64_t sent = p.sent.load(std::memory_order_relaxed);
  std::uint64_t due;
  const double ns_per_order = config_.rate > 0 ? 1e9 / config_.rate : 0;
  const std::uint64_t total = config_.kind == OrderSourceConfig::Kind::file ? config_.lines.size() : config_.count;
  if (config_.rate > 0) {
    const double elapsed = static_cast<double>(s.time_ns() - p.logon_ns) / 1e9;
    due = p.sent_before + static_cast<std::uint64_t>(std::floor(elapsed * config_.rate)) + 1;
  } else {
    due = total;
  }
  if (total != 0 && due > total) due = total;
  int work = 0;
  for (std::uint64_t k = sent; k < due && work < 64; ++k) {
    const OrderLine& o =
        config_.kind == OrderSourceConfig::Kind::file ? config_.lines[static_cast<std::size_t>(k)] : config_.order;
    const std::uint64_t seq = s.next_sender_seq();
    const auto [end, ec] = std::to_chars(p.cl_ord_id + p.prefix, p.cl_ord_id + sizeof p.cl_ord_id, seq);
    (void)ec;
    const std::string_view id(p.cl_ord_id, static_cast<std::size_t>(end - p.cl_ord_id));
    const session::SendResult r =
        s.send("D", [&](codec::MessageWriter& w) { write_order(w, p.shape, id, o, s.time_ns()); });
    if (r != session::SendResult::ok) break;  // back-pressure: the rest on a later turn
    p.planned[seq & (PerSession::kPlanned - 1)] =
        config_.rate > 0 ? p.logon_ns + static_cast<std::int64_t>(static_cast<double>(k - p.sent_before) * ns_per_order)
                         : s.time_ns();
    p.sent.store(k + 1, std::memory_order_relaxed);
    ++work;
  }
  return work;
}

std::size_t OrderFlow::bucket_of(std::int64_t us) noexcept {
  if (us < 2048) return static_cast<std::size_t>(us);
  const int e = 63 - __builtin_clzll(static_cast<unsigned long long>(us));  // 11 and up
  const std::size_t b =
      2048 + static_cast<std::size_t>(e - 11) * 64 + ((static_cast<std::uint64_t>(us) >> (e - 6)) & 63);
  return b < kBuckets ? b : kBuckets - 1;
}

std::int64_t OrderFlow::bucket_floor_us(std::size_t b) noexcept {
  if (b < 2048) return static_cast<std::int64_t>(b);
  const std::size_t e = 11 + (b - 2048) / 64;
  return static_cast<std::int64_t>((std::uint64_t{64} + (b - 2048) % 64) << (e - 6));
}

std::string OrderFlow::interval_report() {
  std::vector<std::uint64_t> counts(kBuckets, 0);
  std::uint64_t sent = 0, reports = 0;
  for (const auto& p : per_) {
    sent += p->sent.load(std::memory_order_relaxed);
    reports += p->reports.load(std::memory_order_relaxed);
    for (std::size_t b = 0; b < kBuckets; ++b) counts[b] += p->latency[b].load(std::memory_order_relaxed);
  }
  if (last_counts_.empty()) last_counts_.assign(kBuckets, 0);
  std::uint64_t n = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    const std::uint64_t d = counts[b] - last_counts_[b];
    last_counts_[b] = counts[b];
    counts[b] = d;
    n += d;
  }
  const auto at = [&](double q) -> std::int64_t {
    const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      seen += counts[b];
      if (seen >= want && counts[b] != 0) return bucket_floor_us(b);
    }
    return 0;
  };
  char line[256];
  std::snprintf(
      line, sizeof line, "sent %llu, reports %llu, latency us p50 %lld p99 %lld p99.9 %lld max %lld (%llu answered)",
      static_cast<unsigned long long>(sent - last_sent_), static_cast<unsigned long long>(reports - last_reports_),
      static_cast<long long>(at(0.5)), static_cast<long long>(at(0.99)), static_cast<long long>(at(0.999)),
      static_cast<long long>(at(1.0)), static_cast<unsigned long long>(n));
  last_sent_ = sent;
  last_reports_ = reports;
  return line;
}

}  // namespace kite::app
