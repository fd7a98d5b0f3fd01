// The hot path allocates nothing: this binary replaces the global operator
// new/delete with counting versions and runs a whole decode/encode cycle.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "fix_text.hpp"
#include "kite/codec/codec.hpp"

namespace {
std::atomic<std::uint64_t> g_allocs{0};
}  // namespace

// The replaced delete frees what the replaced new mallocs; g++ cannot see
// the pairing once both are inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(std::size_t n) {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace kite::codec {
namespace {

TEST(AllocTest, theCounterSeesAllocations) {
  const std::uint64_t before = g_allocs.load();
  auto* s = new std::string(100, 'x');
  delete s;
  EXPECT_GT(g_allocs.load(), before);
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

  const std::uint64_t before = g_allocs.load();
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
  const std::uint64_t after = g_allocs.load();
  EXPECT_EQ(checks, 2u * 64 * 100) << "every message decoded and encoded";
  EXPECT_EQ(after - before, 0u) << "allocations on the hot path";
}

}  // namespace
}  // namespace kite::codec
