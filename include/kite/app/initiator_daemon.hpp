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
};

struct InitiatorDaemonConfig {
  session::Config sessions;
  engine::InitiatorConfig engine;          // [engine]
  OrderSourceConfig orders;                // [orders]
  int shutdown_wait_ms = 2000;             // [app] shutdown_wait_ms: SIGTERM waits this long for Logout answers
  LogFormat log_format = LogFormat::text;  // [log] format
};

// Throw ConfigError naming the file, table or session, setting and line.
InitiatorDaemonConfig load_initiator_config(const std::string& path);
InitiatorDaemonConfig parse_initiator_config(std::string_view text, const std::string& name);
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
