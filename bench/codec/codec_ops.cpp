// codec_ops MODE N: runs one codec operation N times on codec_bench's samples,
// for instruction counts under callgrind (see count_instructions.sh):
//   frame   frame() of the NewOrderSingle
//   index   frame + index in one frame_and_build
//   decode  frame + index + the 8 typed reads of decode/kite
//   encode  the ExecutionReport of encode/kite (fixed clock: no clock read)
//   none    nothing (the start-up cost to subtract)
// codec_ops steps: the same counts without valgrind, for any build (valgrind
// 3.19 stops on AVX-512, so the host-tuned build is counted this way): a
// child process runs each operation once, warmed up, single-stepped by the
// parent (ptrace), less the steps of an empty call. Linux only.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#if defined(__linux__)
#include <csignal>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

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
__attribute__((noinline)) std::uint64_t op_none(const char* p, std::size_t) {
  asm volatile("" : "+r"(p));
  return p != nullptr;
}

#if defined(__linux__)
// User-space instructions of one call of op(), by single-stepping a child.
// -1 when ptrace is not allowed here.
template <class Op>
long steps(Op op) {
  const pid_t child = fork();
  if (child < 0) return -1;
  if (child == 0) {
    for (int i = 0; i < 1000; ++i) op();  // caches, predictors and lazy binding warmed
    if (ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) _exit(1);
    raise(SIGSTOP);
    op();
    raise(SIGSTOP);
    _exit(0);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) return -1;
  long n = 0;
  for (;;) {
    if (ptrace(PTRACE_SINGLESTEP, child, nullptr, nullptr) != 0) break;
    if (waitpid(child, &status, 0) != child || !WIFSTOPPED(status)) {
      n = -1;
      break;
    }
    if (WSTOPSIG(status) == SIGSTOP) break;  // the second raise
    ++n;
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return n;
}
#endif
}  // namespace

int main(int argc, char** argv) {
  const std::string msg = kite::bench::samples::new_order_single();
#if defined(__linux__)
  if (argc == 2 && !strcmp(argv[1], "steps")) {
    const kite::bench::samples::ExecutionReportValues v;
    const HeaderTemplate tmpl({"FIX.4.4", v.sender, v.target, "", "", "", ""});
    MessageWriter w(tmpl, TimePrecision::millis);
    std::uint64_t seq = 0;
    volatile std::uint64_t sink = 0;
    const auto on = [&](auto f) { return [&, f] { const char* p = msg.data(); asm volatile("" : "+r"(p)); sink = sink + f(p, msg.size()); }; };
    const long base = steps(on(op_none));
    if (base < 0) {
      std::fprintf(stderr, "codec_ops: ptrace is not allowed here\n");
      return 77;
    }
    const long frame_n = steps(on(op_frame)) - base, index_n = steps(on(op_index)) - base;
    const long decode_n = steps(on(op_decode)) - base;
    const long encode_n = steps(on([&](const char*, std::size_t) { return op_encode(w, ++seq, 1710495000123456000); })) - base;
    std::printf("level %s\nframe %ld\nindex %ld\ndecode %ld\nencode %ld\n", to_string(active_level()), frame_n, index_n, decode_n,
                encode_n);
    return frame_n > 0 && index_n > 0 && decode_n > index_n && encode_n > 0 ? 0 : 1;
  }
#endif
  if (argc != 3) {
    std::fprintf(stderr, "usage: codec_ops frame|index|decode|encode|none N, or codec_ops steps\n");
    return 2;
  }
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
