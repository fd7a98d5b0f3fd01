// codec_ops MODE N: runs one codec operation N times on codec_bench's samples,
// for instruction counts under callgrind (see count_instructions.sh):
//   frame   frame() of the NewOrderSingle
//   index   frame + framed index
//   decode  frame + index + the 8 typed reads of decode/kite
//   encode  the ExecutionReport of encode/kite (fixed clock: no clock read)
//   none    nothing (the start-up cost to subtract)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kite/codec/codec.hpp"
#include "kite_ops.hpp"
#include "samples.hpp"

namespace {
using namespace kite::codec;
kite::bench::KiteDecoder decoder;  // NOLINT: one index for the whole run
__attribute__((noinline)) std::uint64_t op_frame(const char* p, std::size_t n) { return frame<FastScan>(p, n).size; }
__attribute__((noinline)) std::uint64_t op_index(const char* p, std::size_t n) {
  return decoder.ix.frame_and_build<FastScan>(p, n).index.offset;
}
__attribute__((noinline)) std::uint64_t op_decode(const char* p, std::size_t n) { return decoder.decode(p, n); }
char buf[1024];
__attribute__((noinline)) std::uint64_t op_encode(MessageWriter& w, std::uint64_t seq, std::int64_t now) {
  return kite::bench::write_execution_report(w, buf, sizeof buf, seq, now);
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
