// Whatever a peer sends, the link and the session behind it neither crash
// nor read out of bounds (run it under the debug preset's ASan/UBSan build):
// valid streams with random byte flips, truncations, duplications and splits
// are fed to an acceptor connection, before and after logon.
#include <gtest/gtest.h>

#include <random>

#include "support/link_testing.hpp"

namespace kite::link::test {
namespace {

std::string stream(Peer& peer) {
  std::string s = peer.logon(1);
  for (int i = 0; i < 6; ++i) s += peer.order("R");
  s += peer.resend_request(1, 0);
  s += peer.make("4", [](codec::MessageWriter& w) {
    w.add_bool(tag::GapFillFlag, true);
    w.add_uint(tag::NewSeqNo, 3);
  });
  s += peer.make("1", [](codec::MessageWriter& w) { w.add_string(tag::TestReqID, "x"); });
  s += peer.order("P", {.seq = 20, .poss_dup = true});
  s += peer.make("5");
  return s;
}

TEST(LinkRobustness, mutatedStreamsNeverCrashTheConnection) {
  std::mt19937_64 rng(20261130);
  int closed = 0;
  int logged_on = 0;
  std::size_t delivered = 0;
  for (int round = 0; round < 1500; ++round) {
    auto settings = acceptor_settings();
    settings.max_queued = 4;
    settings.queue_bytes = 2048;
    AcceptorRig r(settings);
    std::string s = stream(r.peer);
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const std::size_t at = rng() % s.size();
      switch (rng() % 5) {
        case 0: s[at] = static_cast<char>(rng()); break;
        case 1: s[at] = '\x01'; break;
        case 2: s.erase(at, 1 + rng() % 8); break;
        case 3: s.insert(at, s.substr(at, std::min<std::size_t>(40, s.size() - at))); break;
        case 4: s[at] = static_cast<char>('0' + rng() % 10); break;
      }
    }
    // Feed in random pieces, as a socket would, keeping what was not consumed.
    std::string pending;
    std::size_t pos = 0;
    while (pos < s.size() && !r.wire.closed) {
      const std::size_t n = std::min<std::size_t>(s.size() - pos, 1 + rng() % 300);
      pending.append(s, pos, n);
      pos += n;
      const std::size_t used = r.feed(pending);
      ASSERT_LE(used, pending.size());
      pending.erase(0, used);
      r.clock.advance_ms(static_cast<std::int64_t>(rng() % 1500));
      r.tick();
    }
    if (r.wire.closed) ++closed;
    if (r.app.logons > 0) ++logged_on;
    delivered += r.app.received.size();
    (void)r.wire.take();  // whatever it wrote must frame
  }
  // Some streams were bad enough to be closed; most still logged on and
  // delivered orders around the damage.
  EXPECT_GT(closed, 0);
  EXPECT_GT(logged_on, 500);
  EXPECT_GT(delivered, 1000u);
}

}  // namespace
}  // namespace kite::link::test
