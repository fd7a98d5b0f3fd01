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
// codec_ops rate [REPETITIONS]: those counts beside each operation's least
// time (of 40 repetitions by default) and the clock, read off a chain of
// dependent adds: instructions per ns and per cycle, without hardware
// counters. An operation that issues near the core's width is bound by its
// instruction count; one well below it waits on latency. Linux only.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#if defined(__linux__)
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
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

using Clock = std::chrono::steady_clock;

// ns per call of op over `calls` calls.
template <class Op>
double ns_per_call(Op& op, long calls) {
  const Clock::time_point t0 = Clock::now();
  for (long i = 0; i < calls; ++i) op();
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(calls);
}

// Cycles per ns: a chain of dependent adds runs at one add a cycle on any
// x86-64 core.
double cycles_per_ns(long adds) {
  std::uint64_t x = 0;
  const Clock::time_point t0 = Clock::now();
#pragma GCC unroll 8
  for (long i = 0; i < adds; ++i) {
    asm volatile("" : "+r"(x));  // the barrier keeps each add apart, and waiting for the last
    x += 1;
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  asm volatile("" : "+r"(x));
  return static_cast<double>(adds) / ns;
}

// codec_ops steps (repetitions 0): each operation's instructions; codec_ops
// rate: those beside its least time over the repetitions and the clock.
// Exit status 0, 1 when a count or time is not positive or the decode does
// not count above the index, 77 where ptrace is refused.
int counts(const std::string& msg, long repetitions) {
  const kite::bench::samples::ExecutionReportValues v;
  const HeaderTemplate tmpl({"FIX.4.4", v.sender, v.target, "", "", "", ""});
  MessageWriter w(tmpl, TimePrecision::millis);
  std::uint64_t seq = 0;
  volatile std::uint64_t sink = 0;
  const auto on = [&](auto f) {
    return [&, f] {
      const char* p = msg.data();
      asm volatile("" : "+r"(p));
      sink = sink + f(p, msg.size());
    };
  };
  // Every operation, and the empty call subtracted, through the same wrapper.
  std::function<void()> none = on(op_none);
  const long base = steps(none);
  if (base < 0) {
    std::fprintf(stderr, "codec_ops: ptrace is not allowed here\n");
    return 77;
  }
  struct Op {
    const char* name;
    std::function<void()> run;
    long instructions = 0;
    double least_ns = 1e300;
  };
  Op ops[] = {{"frame", on(op_frame)},
              {"index", on(op_index)},
              {"decode", on(op_decode)},
              {"encode", on([&](const char*, std::size_t) { return op_encode(w, ++seq, 1710495000123456000); })}};
  bool counted = true;
  for (Op& op : ops) {
    op.instructions = steps(op.run) - base;
    counted = counted && op.instructions > 0;
  }
  counted = counted && ops[2].instructions > ops[1].instructions;  // the decode is the index and more
  if (repetitions == 0) {
    std::printf("level %s\n", to_string(active_level()));
    for (const Op& op : ops) std::printf("%s %ld\n", op.name, op.instructions);
    return counted ? 0 : 1;
  }
  // Repetitions of a few ms each, the clock probe and the operations in
  // turn, so that a slow spell of the host falls on all of them; the least
  // time of each and the fastest clock are kept (noise only adds time).
  constexpr long kCalls = 20000, kAdds = 16000000;
  double none_ns = 1e300, ghz = 0;
  for (Op& op : ops) ns_per_call(op.run, kCalls / 10);  // warm
  for (long r = 0; r < repetitions; ++r) {
    ghz = std::max(ghz, cycles_per_ns(kAdds));
    none_ns = std::min(none_ns, ns_per_call(none, kCalls));
    for (Op& op : ops) op.least_ns = std::min(op.least_ns, ns_per_call(op.run, kCalls));
  }
  std::printf(
      "level %s; clock %.2f GHz (a chain of dependent adds); least of %ld repetitions, less an empty call (%.1f ns)\n",
      to_string(active_level()), ghz, repetitions, none_ns);
  std::printf("%-8s %12s %9s %8s %10s\n", "", "instructions", "ns", "per ns", "per cycle");
  bool timed = ghz > 0;
  for (const Op& op : ops) {
    const double ns = op.least_ns - none_ns;
    timed = timed && ns > 0;
    std::printf("%-8s %12ld %9.1f %8.1f %10.2f\n", op.name, op.instructions, ns,
                static_cast<double>(op.instructions) / ns, static_cast<double>(op.instructions) / (ns * ghz));
  }
  return counted && timed ? 0 : 1;
}
#endif

// A whole number (digits, a sign at most) into out, or false.
bool whole_number(const char* s, long& out) noexcept {
  char* rest = nullptr;
  out = std::strtol(s, &rest, 10);
  return rest != s && *rest == '\0';
}
}  // namespace

int main(int argc, char** argv) {
  const std::string msg = kite::bench::samples::new_order_single();
#if defined(__linux__)
  if (argc == 2 && !strcmp(argv[1], "steps")) return counts(msg, 0);
  if ((argc == 2 || argc == 3) && !strcmp(argv[1], "rate")) {
    long repetitions = 40;  // a slow spell of the host can outlast a few hundred ms
    if (argc == 3 && (!whole_number(argv[2], repetitions) || repetitions < 1)) {
      std::fprintf(stderr, "codec_ops rate: REPETITIONS must be a whole number from 1 (it is \"%s\")\n", argv[2]);
      return 2;
    }
    return counts(msg, repetitions);
  }
#endif
  constexpr const char* kUsage =
      "usage: codec_ops frame|index|decode|encode|none N, codec_ops steps or codec_ops rate [REPETITIONS]\n";
  if (argc != 3) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  const char* mode = argv[1];
  long n = 0;
  const bool known = !strcmp(mode, "frame") || !strcmp(mode, "index") || !strcmp(mode, "decode") ||
                     !strcmp(mode, "encode") || !strcmp(mode, "none");
  if (!known || !whole_number(argv[2], n) || n < 0) {
    std::fprintf(stderr, "codec_ops: unknown mode or N not a whole number (\"%s %s\")\n%s", mode, argv[2], kUsage);
    return 2;
  }
  std::uint64_t acc = 0;
  const kite::bench::samples::ExecutionReportValues v;
  const HeaderTemplate tmpl({"FIX.4.4", v.sender, v.target, "", "", "", ""});
  MessageWriter w(tmpl, TimePrecision::millis);
  std::int64_t now = 1710495000123456000;
  acc += op_decode(msg.data(), msg.size()) == 0;
  for (long i = 0; i < n; ++i) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));
    if (!strcmp(mode, "frame"))
      acc += op_frame(p, msg.size());
    else if (!strcmp(mode, "index"))
      acc += op_index(p, msg.size());
    else if (!strcmp(mode, "decode"))
      acc += op_decode(p, msg.size());
    else if (!strcmp(mode, "encode"))
      acc += op_encode(w, static_cast<std::uint64_t>(i + 1), now += 1000);
  }
  std::printf("%llu size=%zu\n", static_cast<unsigned long long>(acc), msg.size());
}
