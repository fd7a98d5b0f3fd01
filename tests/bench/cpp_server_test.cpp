// The cpp flavour runs a kite-acceptor configuration made from the server's
// options; its ExecutionReport is the one the raw flavour sends (same fields
// in the same order, same size); its server side allocates nothing per order.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpp_server.hpp"
#include "kite/app/acceptor.hpp"
#include "kite/bench/acceptor_file.hpp"
#include "kite/codec/codec.hpp"
#include "messages.hpp"
#include "support/alloc_counter.hpp"

namespace kite::bench {
namespace {

namespace fs = std::filesystem;

TEST(CppServer, runsTheKiteAcceptorFileOfItsOptions) {
  ServerOptions o;
  o.model = "pool";
  o.port = 9123;
  o.sessions = 3;
  o.workers = 2;
  o.cores = {1, 0};
  o.coordinator_core = 1;
  o.busy_poll_usecs = 50;
  o.spin = false;
  o.quickack = true;
  o.store = "file";
  o.store_dir = "dir with \"quotes\" and \\";
  const std::string text = cpp_server_config(o);
  const app::AcceptorConfig c = app::parse_acceptor_config(text, "cell.toml");
  EXPECT_EQ(c.engine.model, engine::Model::pool);
  EXPECT_EQ(c.engine.transport, transport::Kind::kernel);
  EXPECT_EQ(c.engine.bind_address, "127.0.0.1");
  EXPECT_EQ(c.engine.port, 9123);
  EXPECT_EQ(c.engine.workers, 2);
  EXPECT_EQ(c.engine.cores, (std::vector<int>{1, 0}));
  EXPECT_EQ(c.engine.coordinator_core, 1);
  EXPECT_EQ(c.engine.idle.kind, engine::IdleKind::block);
  EXPECT_EQ(c.engine.busy_poll_usecs, 50);
  EXPECT_TRUE(c.engine.quickack);
  EXPECT_EQ(c.engine.send_full, engine::SendFullPolicy::wait);
  EXPECT_EQ(c.limits.max_connections, 7u);
  EXPECT_EQ(c.mode, app::Mode::ack);
  ASSERT_EQ(c.sessions.sessions.size(), 3u);
  for (unsigned k = 0; k < 3; ++k) {
    const session::SessionSettings& s = c.sessions.sessions[k];
    EXPECT_EQ(s.role, session::Role::acceptor);
    EXPECT_EQ(s.begin_string, "FIX.4.4");
    EXPECT_EQ(s.sender_comp_id, kServerCompID);
    EXPECT_EQ(s.target_comp_id, client_comp_id(k));
    EXPECT_TRUE(s.reset_on_logon);
    EXPECT_TRUE(s.reset_on_disconnect);
    EXPECT_FALSE(s.validate);
    EXPECT_FALSE(s.check_latency);
    EXPECT_EQ(s.store.kind, session::StoreKind::file);
    EXPECT_EQ(s.store.path, o.store_dir);
  }

  o.spin = true;
  o.store = "null";
  o.store_dir.clear();
  const app::AcceptorConfig d = app::parse_acceptor_config(cpp_server_config(o), "cell.toml");
  EXPECT_EQ(d.engine.idle.kind, engine::IdleKind::busy_spin);
  EXPECT_EQ(d.sessions.sessions[0].store.kind, session::StoreKind::null);
}

// The example of docs/bench_roundtrip.md is what the server writes for it
// (comments aside).
TEST(CppServer, docsShowTheFileItWrites) {
  const char* src = std::getenv("KITE_SOURCE_DIR");
  std::ifstream in(std::string(src ? src : ".") + "/docs/bench_roundtrip.md");
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::size_t section = doc.find("### The cpp flavour's configuration");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = doc.find("```toml\n", section) + 8;
  const std::string example = doc.substr(begin, doc.find("```", begin) - begin);
  std::string expected;
  std::istringstream lines(example);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t comment = line.find('#');
    if (comment != std::string::npos) line.erase(line.find_last_not_of(' ', comment - 1) + 1);
    expected += line + "\n";
  }
  ServerOptions o;
  o.model = "mono";
  o.sessions = 2;
  const std::string text = cpp_server_config(o);
  EXPECT_EQ(text.substr(text.find('\n') + 1), expected);
}

// The tags of a frame's fields, in order.
std::vector<std::string> tags_of(std::string_view frame) {
  std::vector<std::string> tags;
  std::size_t at = 0;
  while (at < frame.size()) {
    const std::size_t eq = frame.find('=', at);
    tags.emplace_back(frame.substr(at, eq - at));
    at = frame.find(codec::kSoh, eq) + 1;
  }
  return tags;
}

// run_cpp_server on a thread of its own, blocking idle, one session.
class Cell {
 public:
  // acceptor_config: the lab's acceptor file to run, else the server's options.
  explicit Cell(const std::string& acceptor_config = {}) {
    ready_ = fs::temp_directory_path() / ("kite-cpp-server-" + std::to_string(::getpid()));
    fs::remove(ready_);
    ServerOptions o;
    o.spin = false;
    o.ready_file = ready_.string();
    o.acceptor_config = acceptor_config;
    server_ = std::thread([this, o] {
      rc_ = run_cpp_server(o, stop_, error_);
      ended_ = true;
    });
    for (int i = 0; i < 500 && !fs::exists(ready_) && !ended_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (fs::exists(ready_)) std::ifstream(ready_) >> port_;
    fs::remove(ready_);
  }
  ~Cell() { stop(); }
  int port() const { return port_; }
  // Stops the server; its exit code.
  int stop() {
    stop_ = true;
    if (server_.joinable()) server_.join();
    return rc_;
  }
  const std::string& error() const { return error_; }

 private:
  fs::path ready_;
  std::atomic<bool> stop_{false}, ended_{false};
  std::string error_;
  int rc_ = -1;
  int port_ = 0;
  std::thread server_;
};

// Session BENCH0 over a blocking socket; after construction nothing allocates.
class Client {
 public:
  explicit Client(int port)
      : header_(codec::HeaderFields{"FIX.4.4", client_comp_id(0), std::string(kServerCompID), {}, {}, {}, {}}),
        writer_(header_, codec::TimePrecision::micros) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Client() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool logon(std::int64_t now) { return put(write_logon(writer_, tx_, sizeof tx_, seq_++, now)); }
  bool order(std::int64_t now, std::uint64_t clordid) {
    return put(write_order(writer_, tx_, sizeof tx_, seq_++, now, clordid));
  }
  // The next frame received (valid until the next call); empty when the
  // connection ends.
  std::string_view next() {
    for (;;) {
      const codec::FrameResult fr = codec::frame(rx_ + at_, len_ - at_);
      if (fr.status == codec::FrameStatus::complete) {
        const std::string_view f(rx_ + at_, fr.size);
        at_ += fr.size;
        return f;
      }
      std::memmove(rx_, rx_ + at_, len_ - at_);
      len_ -= at_;
      at_ = 0;
      const ssize_t n = ::recv(fd_, rx_ + len_, sizeof rx_ - len_, 0);
      if (n <= 0) return {};
      len_ += static_cast<std::size_t>(n);
    }
  }

 private:
  bool put(std::size_t n) { return ::send(fd_, tx_, n, 0) == static_cast<ssize_t>(n); }
  codec::HeaderTemplate header_;
  codec::MessageWriter writer_;
  int fd_ = -1;
  bool connected_ = false;
  std::uint64_t seq_ = 1;
  char tx_[1024];
  char rx_[65536];
  std::size_t at_ = 0, len_ = 0;
};

TEST(CppServer, answersAnOrderWithTheRawFlavoursExecutionReport) {
  Cell cell;
  ASSERT_GT(cell.port(), 0) << cell.error();
  Client client(cell.port());
  ASSERT_TRUE(client.connected());
  const std::int64_t now = codec::utc_now_ns();
  ASSERT_TRUE(client.logon(now));
  ASSERT_TRUE(client.order(now, 1));
  ASSERT_NE(client.next().find("\x01"
                               "35=A\x01"),
            std::string_view::npos);
  const std::string cpp(client.next());
  EXPECT_EQ(cell.stop(), 0) << cell.error();

  // The raw flavour's reply to the same order, MsgSeqNum and ID width.
  codec::HeaderTemplate server_header(
      codec::HeaderFields{"FIX.4.4", std::string(kServerCompID), client_comp_id(0), {}, {}, {}, {}});
  codec::MessageWriter w(server_header);
  const OrderEcho echo{"C000000000001", "KITE.XPAR", '1', "100", "101.25"};
  constexpr std::uint64_t id = 1'000'000'000'000'000;
  char out[1024];
  const std::string raw(out, write_execution_report(w, out, sizeof out, 2, now, echo, id, id));
  EXPECT_EQ(tags_of(cpp), tags_of(raw)) << cpp << "\n" << raw;
  EXPECT_EQ(cpp.size(), raw.size()) << cpp << "\n" << raw;
}

// The lab's way: the server runs the acceptor file it is given, not its options.
TEST(CppServer, runsTheAcceptorFileItIsGiven) {
  const fs::path file = fs::temp_directory_path() / ("kite-cpp-server-" + std::to_string(::getpid()) + ".toml");
  AcceptorFile f;
  f.spin = false;
  f.sessions = 1;
  ASSERT_TRUE(write_file_atomically(file.string(), render_acceptor_file(f)));
  {
    Cell cell(file.string());
    ASSERT_GT(cell.port(), 0) << cell.error();
    Client client(cell.port());
    ASSERT_TRUE(client.connected());
    ASSERT_TRUE(client.logon(codec::utc_now_ns()));
    ASSERT_TRUE(client.order(codec::utc_now_ns(), 7));
    ASSERT_NE(client.next().find("\x01"
                                 "35=A\x01"),
              std::string_view::npos);
    EXPECT_NE(client.next().find("\x01"
                                 "11=C000000000007\x01"),
              std::string_view::npos);
    EXPECT_EQ(cell.stop(), 0) << cell.error();
  }
  // A transport this build lacks is "unsupported" (exit 3), read from the file.
  f.transport = "tcpdirect";
  ASSERT_TRUE(write_file_atomically(file.string(), render_acceptor_file(f)));
  {
    Cell cell(file.string());
    EXPECT_EQ(cell.stop(), 3);
    EXPECT_EQ(cell.error().rfind("unsupported: cpp server has no tcpdirect transport", 0), 0u) << cell.error();
  }
  // A file that does not parse names itself; a missing one is said so.
  ASSERT_TRUE(write_file_atomically(file.string(), "[engine]\nmodel = \"triple\"\n"));
  {
    Cell cell(file.string());
    EXPECT_EQ(cell.stop(), 1);
    EXPECT_NE(cell.error().find(file.string()), std::string::npos) << cell.error();
  }
  fs::remove(file);
  {
    Cell cell(file.string());
    EXPECT_EQ(cell.stop(), 1);
    EXPECT_EQ(cell.error(), "cannot read the acceptor file " + file.string());
  }
}

// The whole server side of an order (engine, session, OrderApplication, the
// acceptor's connection wrapper, null store) allocates nothing once logged on.
TEST(CppServer, answersOrdersWithoutAllocating) {
  constexpr int kWarmup = 100, kOrders = 2000;
  Cell cell;
  ASSERT_GT(cell.port(), 0) << cell.error();
  Client client(cell.port());
  ASSERT_TRUE(client.connected());
  ASSERT_TRUE(client.logon(codec::utc_now_ns()));
  ASSERT_FALSE(client.next().empty());
  int answered = 0;
  std::uint64_t before = 0;
  for (int i = 0; i < kWarmup + kOrders; ++i) {
    if (i == kWarmup) before = kite::test::allocations();
    if (!client.order(codec::utc_now_ns(), static_cast<std::uint64_t>(i))) break;
    if (client.next().find("\x01"
                           "150=0\x01") != std::string_view::npos)
      ++answered;
  }
  const std::uint64_t allocs = kite::test::allocations() - before;
  EXPECT_EQ(answered, kWarmup + kOrders);
  EXPECT_EQ(allocs, 0u);
  EXPECT_EQ(cell.stop(), 0) << cell.error();
}

}  // namespace
}  // namespace kite::bench
