// The agent that serves connections on one thread: it owns a Driver, a fixed
// table of connection slots (allocated at set-up), and the glue between transport
// events and the Protocol of each connection. Internal to kite_engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kite/engine/agent.hpp"
#include "kite/engine/engine.hpp"
#include "kite/engine/protocol.hpp"
#include "kite/engine/spsc_queue.hpp"
#include "kite/transport/driver.hpp"

namespace kite::engine::detail {

// State shared by every agent of one Engine or Initiator.
struct Shared {
  explicit Shared(ProtocolFactory& f) : factory(f) {}
  ProtocolFactory& factory;
  std::mutex factory_mu;  // open()/release() are serialised (set-up time only)
  std::atomic<int> next_id{1};
  SendFullPolicy policy = SendFullPolicy::disconnect;
  std::int64_t send_full_limit_ns = 1000000000;
  bool log = true;

  std::atomic<std::uint64_t> accepted{0}, refused{0}, closed{0}, slow_consumers{0}, send_full_events{0},
      front_door_waits{0}, rx_compactions{0}, tx_high_water{0};
  std::atomic<int> active{0};
  // Engine::wake_timers(): each agent gives every connection a turn when it changes.
  std::atomic<std::uint32_t> timer_wake{0};
  std::string option_report;  // written under factory_mu
};

struct AgentSetup {
  std::string name;  // for log lines
  int max_connections = 32;
  std::size_t recv_buffer = 64 * 1024;
  std::size_t send_buffer = 256 * 1024;
  SpscQueue<int>* inbox = nullptr;          // pool workers / initiators: fds handed over
  std::atomic<int>* load = nullptr;         // pool workers: connections assigned, decremented on close
  int own_listener = -1;                    // single: accept only while there is room
  std::int64_t timer_interval_ns = 100000;  // Protocol::on_timer at most this often (0: every cycle)
};

class SessionAgent final : public Agent, public transport::Sink {
 public:
  SessionAgent(Shared& shared, std::unique_ptr<transport::Driver> driver, const AgentSetup& setup);
  ~SessionAgent() override;

  // Set-up time: a listener the driver watches (mono, shard).
  bool listen(int fd, std::string& error) { return driver_->listen(fd, error); }

  int do_work(std::int64_t now_ns) noexcept override;
  int block(std::int64_t now_ns, int timeout_us) noexcept override;
  void on_close() noexcept override;

  void on_data(transport::Conn& c, const char* p, std::size_t n) noexcept override;
  void on_closed(transport::Conn& c, transport::Io why, int err) noexcept override;
  void on_accepted(int fd) noexcept override;

  std::uint64_t accepted() const noexcept { return accepted_.load(std::memory_order_relaxed); }

 private:
  // One connection: its transport state, its Protocol, and the Outbound that
  // Protocol writes through.
  // Line-aligned, what a message or a cycle reads first: these fields, then
  // conn (whose buffers' positions end in the third line); what only a full
  // send buffer or a close reads comes after conn.
  struct alignas(64) Slot final : Outbound {
    Protocol* proto = nullptr;
    bool open = false;
    bool closing = false;
    bool close_flush = true;
    std::int64_t full_since = 0;   // first failed claim since the last drained byte
    std::uint64_t retry_mark = 0;  // conn.bytes_sent when rx was last left unconsumed
    std::int64_t timer_due = 0;    // no timer turn before this (Protocol::timer_quiet_ns)
    transport::Conn conn;
    SessionAgent* owner = nullptr;
    int id = 0;
    const char* close_reason = nullptr;
    std::uint64_t sent_mark = 0;  // conn.bytes_sent when full_since was set
    std::int64_t close_since = 0;  // closing with flush: since when the send side has not moved
    std::uint64_t close_mark = 0;  // conn.bytes_sent then

    char* claim(std::size_t min) noexcept override;
    void commit(std::size_t n) noexcept override { conn.tx.commit(n); }
    std::size_t pending() const noexcept override { return conn.tx.size(); }
    void close(const char* reason, bool flush) noexcept override;
  };

  int drain_inbox() noexcept;
  int accept_own() noexcept;
  int service() noexcept;
  void adopt(int fd) noexcept;
  // Hands bytes to s's protocol, its replies written into the stage (below)
  // when s has nothing pending, and flushes them.
  void deliver(Slot& s, const char* p, std::size_t n) noexcept;
  void deliver_bytes(Slot& s, const char* p, std::size_t n) noexcept;
  void flush(Slot& s) noexcept;
  void finish(Slot& s, const char* reason) noexcept;
  void reap() noexcept;

  Shared& shared_;
  std::unique_ptr<transport::Driver> driver_;
  AgentSetup setup_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<Slot*> free_;
  std::vector<Slot*> active_;
  std::vector<Slot*> zombies_;  // closed, waiting for in-flight I/O to complete
  std::int64_t now_ = 0;
  std::int64_t last_timer_ns_ = 0;
  bool timer_work_ = false;  // the last timer pass did work: run the next cycle's too
  std::uint32_t wake_seen_ = 0;  // Shared::timer_wake as of the last timer pass
  // Transports that send synchronously (kernel epoll/direct): a connection
  // with nothing pending writes its replies here, lent as its send buffer
  // for one delivery (SendBuffer::lend), so the thread's connections share
  // these lines; what the socket does not take moves to its own buffer.
  std::unique_ptr<char[]> stage_buf_;
  char* stage_ = nullptr;
  std::atomic<std::uint64_t> accepted_{0};
};

}  // namespace kite::engine::detail
