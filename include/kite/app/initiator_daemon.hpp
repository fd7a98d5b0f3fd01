// kite-initiator's configuration and its order source (docs/initiator.md).
// The file is the session loader's (docs/config.md: [defaults] merged into
// each [[session]], ConnectionType = "initiator", SocketConnectHost and
// SocketConnectPort) plus [engine], [orders], [app] and [log].
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "kite/app/initiator.hpp"
#include "kite/codec/values.hpp"

namespace kite::app {

// One order of the source: a NewOrderSingle (limit, day).
struct OrderLine {
  char side = '1';  // 1 buy, 2 sell
  std::string symbol;
  std::int64_t quantity = 0;
  codec::Decimal price;
  std::size_t line = 0;  // file: its line number (1-based); 0 for the rate source's order
};

// The fields of a session's NewOrderSingle beyond ClOrdID, Symbol, Side,
// OrderQty, OrdType and Price, as the session's dictionary defines the
// message: HandlInst (21, '1') is required on FIX.4.0-4.3, TransactTime (60)
// is not defined on FIX.4.0 and 4.1.
struct OrderShape {
  bool handl_inst = false;
  bool transact_time = true;
  // The shape a dictionary-less caller gets: by BeginString alone.
  static OrderShape for_version(std::string_view begin_string) noexcept;
};

// [orders]: what each logged-on session sends.
struct OrderSourceConfig {
  enum class Kind : std::uint8_t { none, rate, file };
  Kind kind = Kind::none;
  double rate = 0;            // orders per second per session (file: 0 sends them all at once)
  std::uint64_t count = 0;    // rate: orders per session per run (0: no end)
  int report_interval_s = 0;  // a line with the interval's orders and latency every this often (0: none)
  std::string file;           // file: one order per line, "side,symbol,quantity,price"
  OrderLine order{'1', "KITE", 100, {1000, -2}};  // rate: the order sent
  std::vector<OrderLine> lines;                   // file: read at load
  std::vector<OrderShape> shapes;                 // per session, from its dictionary (set at load)
};

struct InitiatorDaemonConfig {
  session::Config sessions;
  engine::InitiatorConfig engine;          // [engine]
  OrderSourceConfig orders;                // [orders]
  int shutdown_wait_ms = 2000;             // [app] shutdown_wait_ms: SIGTERM waits this long for Logout answers
  LogFormat log_format = LogFormat::text;  // [log] format
};

// Throw ConfigError naming the file, table or session, setting and line.
// Each session's NewOrderSingle is checked at load against the session's
// dictionary (its DataDictionary, else the default folder): a required field
// the order source cannot fill, or an order (the file's, by line number; the
// rate source's one) the dictionary refuses, is a ConfigError, so nothing is
// sent from a file with one bad line.
InitiatorDaemonConfig load_initiator_config(const std::string& path);
InitiatorDaemonConfig parse_initiator_config(std::string_view text, const std::string& name);
// libkite's initiator's file (kite_initiator_start_*): kite-initiator's
// [engine], [tls], [defaults] and [[session]], read by the same code with the
// same messages; [orders], [app] and [log] are kite-initiator's own (there
// the caller sends and stops) and are refused as unknown tables.
InitiatorDaemonConfig parse_library_initiator_config(std::string_view text, const std::string& name);
// The order file's lines; ConfigError "FILE:LINE: why" for a bad one.
std::vector<OrderLine> parse_order_lines(std::string_view text, const std::string& name);

// The order source over every session: on each timer turn of a logged-on
// session it sends the orders due (the rate counted from the Logon, or the
// file's next lines), at most 64 a turn, and counts the ExecutionReports
// that come back. ClOrdIDs are "<SenderCompID>-<MsgSeqNum>": unique while
// the session's numbers are not reset. Allocation-free after set-up.
class OrderFlow final : public InitiatorHooks {
 public:
  OrderFlow(const OrderSourceConfig& config, std::size_t sessions);
  ~OrderFlow() override;
  session::Application& application(std::size_t i, const session::SessionSettings& s) override;
  int on_timer(std::size_t i, session::Session& s) noexcept override;
  std::uint64_t sent(std::size_t i) const noexcept;
  std::uint64_t reports(std::size_t i) const noexcept;
  // Since the last call (the first: since start), over every session:
  // "sent N, reports M, latency us p50 A p99 B p99.9 C max D (K answered)".
  // Latency runs from each order's planned send time (open loop: the rate's
  // schedule from the Logon; a file without a rate: its send) to its first
  // ExecutionReport, so a stall counts for every order it delays.
  // One thread calls it (not a session's: it allocates).
  std::string interval_report();

  // Latency buckets: 1 us wide below 2048 us, then 64 per power of two.
  static constexpr std::size_t kBuckets = 2048 + 64 * 32;
  static std::size_t bucket_of(std::int64_t us) noexcept;
  static std::int64_t bucket_floor_us(std::size_t b) noexcept;

 private:
  struct PerSession;
  std::vector<std::uint64_t> last_counts_;  // interval_report's previous snapshot
  std::uint64_t last_sent_ = 0, last_reports_ = 0;
  const OrderSourceConfig& config_;
  std::vector<std::unique_ptr<PerSession>> per_;
};

}  // namespace kite::app
