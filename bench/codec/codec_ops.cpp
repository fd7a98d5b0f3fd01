// codec_ops MODE N: runs one codec operation N times on codec_bench's samples,
// for instruction counts under callgrind (see count_instructions.sh):
//   frame   frame() of the NewOrderSingle
//   index   frame + index
//   decode  frame + index + the 8 typed reads of decode/kite
//   encode  the ExecutionReport of encode/kite (fixed clock: no clock read)
//   none    nothing (the start-up cost to subtract)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include "kite/codec/codec.hpp"
#include "samples.hpp"
namespace {
using namespace kite::codec;
FieldIndex ix(256);  // NOLINT: one index for the whole run
__attribute__((noinline)) std::uint64_t op_frame(const char* p, std::size_t n) { return frame<FastScan>(p, n).size; }
__attribute__((noinline)) std::uint64_t op_index(const char* p, std::size_t n) {
  const FrameResult fr = frame<FastScan>(p, n);
  return ix.build<FastScan>(p, fr).offset;
}
__attribute__((noinline)) std::uint64_t op_decode(const char* p, std::size_t n) {
  const FrameResult fr = frame<FastScan>(p, n);
  if (fr.status != FrameStatus::complete) return 0;
  if (!ix.build<FastScan>(p, fr)) return 0;
  std::string_view cl, symbol, account;
  char side = 0, type = 0;
  Decimal qty, price;
  std::int64_t t = 0;
  const bool ok = ix.get(tag::ClOrdID, cl) == Get::ok && ix.get(tag::Symbol, symbol) == Get::ok &&
                  ix.get(tag::Side, side) == Get::ok && ix.get(tag::OrderQty, qty) == Get::ok &&
                  ix.get(tag::OrdType, type) == Get::ok && ix.get(tag::Price, price) == Get::ok &&
                  ix.get_timestamp(tag::TransactTime, t) == Get::ok && ix.get(tag::Account, account) == Get::ok;
  if (!ok) return 0;
  return cl.size() + symbol.size() + static_cast<std::uint64_t>(side) + static_cast<std::uint64_t>(qty.mantissa) +
         static_cast<std::uint64_t>(type) + static_cast<std::uint64_t>(price.mantissa) + static_cast<std::uint64_t>(t) +
         account.size();
}
char buf[1024];
__attribute__((noinline)) std::uint64_t op_encode(MessageWriter& w, std::uint64_t seq, std::int64_t now) {
  const kite::bench::samples::ExecutionReportValues v;
  const Decimal px{v.price_ticks, -4};
  w.begin(buf, sizeof buf, "8", seq, now);
  w.add_string(tag::OrderID, v.order_id);
  w.add_string(tag::ExecID, v.exec_id);
  w.add_char(tag::ExecType, v.exec_type);
  w.add_char(tag::OrdStatus, v.ord_status);
  w.add_char(tag::Side, v.side);
  w.add_int(tag::LeavesQty, v.leaves_qty);
  w.add_int(tag::CumQty, v.cum_qty);
  w.add_decimal(tag::AvgPx, px);
  w.add_string(tag::ClOrdID, v.cl_ord_id);
  w.add_string(tag::Account, v.account);
  w.add_string(tag::Symbol, v.symbol);
  w.add_string(207, v.security_exchange);
  w.add_int(tag::OrderQty, v.order_qty);
  w.add_char(tag::OrdType, v.ord_type);
  w.add_decimal(tag::Price, px);
  w.add_char(tag::TimeInForce, v.time_in_force);
  w.add_int(tag::LastQty, v.last_qty);
  w.add_decimal(tag::LastPx, px);
  w.add_timestamp(tag::TransactTime, now, TimePrecision::micros);
  w.add_string(tag::Text, v.text);
  return w.finish();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: codec_ops frame|index|decode|encode|none N\n");
    return 2;
  }
  const std::string msg = kite::bench::samples::new_order_single();
  const char* mode = argv[1];
  const long n = std::atol(argv[2]);
  std::uint64_t acc = 0;
  const kite::bench::samples::ExecutionReportValues v;
  const HeaderTemplate tmpl({"FIX.4.4", v.sender, v.target, "", "", "", ""});
  MessageWriter w(tmpl, TimePrecision::millis);
  std::int64_t now = 1710495000123456000;
  acc += op_decode(msg.data(), msg.size()) == 0;
  for (long i = 0; i < n; ++i) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));
    if (!strcmp(mode, "frame")) acc += op_frame(p, msg.size());
    else if (!strcmp(mode, "index")) acc += op_index(p, msg.size());
    else if (!strcmp(mode, "decode")) acc += op_decode(p, msg.size());
    else if (!strcmp(mode, "encode")) acc += op_encode(w, static_cast<std::uint64_t>(i + 1), now += 1000);
  }
  std::printf("%llu size=%zu\n", static_cast<unsigned long long>(acc), msg.size());
}
