// The hot path allocates nothing: this binary replaces the global operator
// new/delete with counting versions and runs a whole decode/encode cycle.
#include <gtest/gtest.h>

#include "support/alloc_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "fix_text.hpp"
#include "kite/codec/codec.hpp"

namespace kite::codec {
namespace {

TEST(AllocTest, theCounterSeesAllocations) {
  const std::uint64_t before = kite::test::allocations();
  auto* s = new std::string(100, 'x');
  delete s;
  EXPECT_GT(kite::test::allocations(), before);
}

TEST(AllocTest, allocationsWhileCountingIsOffAreNotCounted) {
  kite::test::set_counting(false);
  const std::uint64_t before = kite::test::allocations();
  auto* s = new std::string(100, 'x');
  delete s;
  const std::uint64_t while_off = kite::test::allocations() - before;
  kite::test::set_counting(true);
  EXPECT_EQ(while_off, 0u);
  s = new std::string(100, 'y');
  delete s;
  EXPECT_GT(kite::test::allocations(), before);
}

TEST(AllocTest, decodeAndEncodeAllocateNothingPerMessage) {
  // Set-up: may allocate.
  std::string stream;
  for (std::uint64_t i = 1; i <= 64; ++i) stream += testing::new_order_single_44(i);
  FieldIndex ix;
  const HeaderTemplate tmpl({"FIX.4.4", "KITEEXCH", "CLIENT01", "", "", "", ""});
  MessageWriter w(tmpl, TimePrecision::micros);
  char out[1024];
  std::uint64_t checks = 0;

  const std::uint64_t before = kite::test::allocations();
  for (int round = 0; round < 100; ++round) {
    std::size_t at = 0;
    while (at < stream.size()) {
      const FrameResult fr = frame<FastScan>(stream.data() + at, stream.size() - at);
      if (fr.status != FrameStatus::complete) break;
      const IndexResult ir = ix.build<FastScan>(stream.data() + at, fr.size);
      Header h;
      const HeaderResult hr = read_header(ix, h);
      std::string_view cl, sym, acct;
      std::uint64_t qty = 0;
      Decimal px;
      char side = 0, type = 0;
      std::int64_t t = 0;
      checks += ir && hr && ix.get(tag::ClOrdID, cl) == Get::ok && ix.get(tag::Symbol, sym) == Get::ok &&
                ix.get(tag::Account, acct) == Get::ok && ix.get(tag::OrderQty, qty) == Get::ok &&
                ix.get(tag::Price, px) == Get::ok && ix.get(tag::Side, side) == Get::ok &&
                ix.get(tag::OrdType, type) == Get::ok && ix.get_timestamp(tag::TransactTime, t) == Get::ok;

      w.begin(out, sizeof out, "8", h.msg_seq_num, t);
      w.add_string(tag::OrderID, "O-1");
      w.add_string(tag::ClOrdID, cl);
      w.add_string(tag::ExecID, "E-1");
      w.add_char(tag::ExecType, '0');
      w.add_char(tag::OrdStatus, '0');
      w.add_string(tag::Symbol, sym);
      w.add_char(tag::Side, side);
      w.add_uint(tag::OrderQty, qty);
      w.add_decimal(tag::Price, px);
      w.add_uint(tag::LeavesQty, qty);
      w.add_uint(tag::CumQty, 0);
      w.add_decimal(tag::AvgPx, {0, 0});
      w.add_timestamp(tag::TransactTime, t);
      checks += w.finish() > 0;
      at += fr.size;
    }
  }
  const std::uint64_t after = kite::test::allocations();
  EXPECT_EQ(checks, 2u * 64 * 100) << "every message decoded and encoded";
  EXPECT_EQ(after - before, 0u) << "allocations on the hot path";
}

}  // namespace
}  // namespace kite::codec
