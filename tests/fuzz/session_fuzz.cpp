// Arbitrary byte streams into an acceptor SessionConnection (the link:
// framing, Logon identification, the Session's checks, admin replies,
// resends, timers), with a fake clock and a fake Outbound.
//
// Input: byte 0 holds options (bit 0: a valid Logon from PEER goes first;
// bit 1: that Logon asks for a sequence reset; bits 2-7: chunk size), byte 1
// the clock step between chunks (x 250 ms), the rest is the peer's stream,
// fed in chunks; after each chunk the clock moves and the timers run.
//
// Invariants: no crash or sanitizer report; on_data() never consumes more
// than it was given; every byte the session writes frames as a complete FIX
// message whose fields index cleanly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/codec.hpp"
#include "kite/link/connection.hpp"
#include "kite/session/registry.hpp"
#include "kite/session/session.hpp"

namespace {

using namespace kite;
using namespace kite::session;
using namespace kite::link;

void check(bool ok) {
  if (!ok) std::abort();
}

class Wire final : public engine::Outbound {
 public:
  char* claim(std::size_t min) noexcept override { return min <= scratch_.size() ? scratch_.data() : nullptr; }
  void commit(std::size_t n) noexcept override {
    check(n <= scratch_.size());
    bytes.append(scratch_.data(), n);
  }
  std::size_t pending() const noexcept override { return 0; }
  void close(const char*, bool) noexcept override { closed = true; }

  std::string bytes;
  bool closed = false;

 private:
  std::vector<char> scratch_ = std::vector<char>(64 * 1024);
};

// Answers nothing: the session's own replies are what is checked here.
class QuietApp final : public Application {
 public:
  void on_message(Session&, const codec::Header&, const codec::FieldIndex&) noexcept override {}
};

// Every message the session wrote must frame and index.
void check_output(std::string_view out) {
  codec::FieldIndex ix;
  while (!out.empty()) {
    const codec::FrameResult fr = codec::frame(out.data(), out.size());
    check(fr.status == codec::FrameStatus::complete);
    check(static_cast<bool>(ix.build(out.substr(0, fr.size))));
    out.remove_prefix(fr.size);
  }
}

std::string logon(const Clock& clock, bool reset) {
  codec::HeaderTemplate header({"FIX.4.4", "PEER", "KITE", "", "", "", ""});
  codec::MessageWriter w(header);
  char buf[512];
  w.begin(buf, sizeof buf, "A", 1, clock.now_ns());
  w.add_uint(codec::tag::EncryptMethod, 0);
  w.add_uint(codec::tag::HeartBtInt, 30);
  if (reset) w.add_bool(codec::tag::ResetSeqNumFlag, true);
  const std::size_t n = w.finish();
  check(n > 0);
  return std::string(buf, n);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t options = data[0];
  const std::int64_t step_ms = static_cast<std::int64_t>(data[1]) * 250;
  const std::size_t chunk = 1 + (static_cast<std::size_t>(options >> 2) * 37) % 4096;
  data += 2;
  size -= 2;

  FakeClock clock;
  NullLogger log;
  QuietApp app;
  SessionRegistry registry(clock, log);
  SessionSettings s;
  s.role = Role::acceptor;
  s.begin_string = "FIX.4.4";
  s.sender_comp_id = "KITE";
  s.target_comp_id = "PEER";
  s.heart_bt_int = 30;
  s.store.kind = StoreKind::memory;
  s.store.capacity_bytes = 1u << 20;
  s.max_queued = 64;
  s.queue_bytes = 64 * 1024;
  registry.add(s, app);
  AcceptorLimits limits;
  limits.max_message_size = 8 * 1024;
  SessionConnection conn(registry, limits);
  Wire wire;
  conn.on_connected(wire, clock.now_ns());

  std::string pending;  // bytes not yet consumed, as the runtime keeps them
  if (options & 1) pending = logon(clock, (options & 2) != 0);
  std::size_t at = 0;
  // Bounded: every round consumes input or moves the clock; a few idle rounds end it.
  for (int idle = 0; !wire.closed && idle < 4;) {
    const std::size_t take = std::min(chunk, size - at);
    pending.append(reinterpret_cast<const char*>(data) + at, take);
    at += take;
    const std::size_t consumed = conn.on_data(pending.data(), pending.size(), clock.now_ns());
    check(consumed <= pending.size());
    pending.erase(0, consumed);
    if (wire.closed) break;
    clock.advance_ms(step_ms);
    conn.on_timer(clock.now_ns());
    if (take == 0 && consumed == 0) ++idle;
  }
  conn.on_disconnected("fuzz input done", clock.now_ns());
  check_output(wire.bytes);
  return 0;
}
