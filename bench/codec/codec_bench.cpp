// codec_bench: Kite against QuickFIX 1.15.1 on the same bytes.
//   decode/*    frame (Kite) or Message(string, no validation) (QuickFIX),
//               index, and 8 typed reads of a ~200-byte NewOrderSingle
//   validate/*  the same with full FIX44.xml dictionary validation
//   encode/*    build and serialise a ~280-byte ExecutionReport
// Each reports allocs_per_op: heap allocations per operation, counted by the
// operator new that kite_alloc_counter replaces (QuickFIX's shared library
// calls it too).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "kite/bench/alloc_counter.hpp"
#include "kite/codec/codec.hpp"
#include "kite/codec/dictionary.hpp"
#include "kite/codec/level.hpp"
#include "kite/codec/validator.hpp"
#include "kite/util/dictionary_dir.hpp"
#include "kite_ops.hpp"
#include "quickfix_codec.hpp"
#include "samples.hpp"

namespace kite::bench {
namespace {

using namespace kite::codec;

using util::dictionary_dir;

// Heap allocations per operation, counted over 1000 untimed runs of the
// same operation before the timed loop (so the framework's own allocations
// around the loop are not charged to it). Counting is off everywhere else
// (main): the timed loops do not pay for it, QuickFIX's 16 or 27
// allocations an operation least of all.
template <class Op>
void count_allocs(benchmark::State& state, Op&& op) {
  constexpr int kRuns = 1000;
  kite::bench::set_counting(true);
  const std::uint64_t before = kite::bench::allocations();
  for (int i = 0; i < kRuns; ++i) op();
  const std::uint64_t n = kite::bench::allocations() - before;
  kite::bench::set_counting(false);
  state.counters["allocs_per_op"] = static_cast<double>(n) / kRuns;
}

template <class T>
void keep(T v) {
  asm volatile("" : "+r"(v));
}

void decode_kite(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  KiteDecoder d;
  if (d.decode(msg.data(), msg.size()) == 0) state.SkipWithError("Kite did not decode the sample");
  count_allocs(state, [&] { keep(d.decode(msg.data(), msg.size())); });
  for (auto _ : state) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));  // the bytes are new each time, as far as the compiler knows
    keep(d.decode(p, msg.size()));
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * msg.size()));
}

void decode_quickfix(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  QuickfixCodec qf(dictionary_dir() + "/FIX44.xml");
  if (qf.decode(msg) == 0) state.SkipWithError("QuickFIX did not decode the sample");
  count_allocs(state, [&] { keep(qf.decode(msg)); });
  for (auto _ : state) keep(qf.decode(msg));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * msg.size()));
}

void validate_kite(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  const DictionaryLoad load = Dictionary::load(dictionary_dir() + "/FIX44.xml");
  if (!load) {
    state.SkipWithError(load.error.c_str());
    return;
  }
  Validator validator(*load.dictionary);
  KiteDecoder d;
  const auto op = [&]() noexcept -> std::uint64_t {
    const FrameResult fr = frame<FastScan>(msg.data(), msg.size());
    if (fr.status != FrameStatus::complete || !d.ix.build<FastScan>(msg.data(), fr)) return 0;
    Header h;
    if (!read_header(d.ix, h) || !validator.validate(d.ix, h)) return 0;
    return d.read_eight();
  };
  if (op() == 0) {
    d.ix.build(msg);
    const ValidationResult r = validator.validate(d.ix);
    state.SkipWithError((std::string("Kite rejected the sample: ") + r.text).c_str());
    return;
  }
  count_allocs(state, [&] { keep(op()); });
  for (auto _ : state) keep(op());
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * msg.size()));
}

void validate_quickfix(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  QuickfixCodec qf(dictionary_dir() + "/FIX44.xml");
  if (qf.validate(msg) == 0) state.SkipWithError("QuickFIX rejected the sample");
  count_allocs(state, [&] { keep(qf.validate(msg)); });
  for (auto _ : state) keep(qf.validate(msg));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * msg.size()));
}

void encode_kite(benchmark::State& state) {
  const samples::ExecutionReportValues v;
  const HeaderTemplate tmpl({"FIX.4.4", v.sender, v.target, "", "", "", ""});
  MessageWriter w(tmpl, TimePrecision::millis);
  char buf[1024];
  std::uint64_t seq = 1;
  std::size_t n = 0;
  const auto op = [&]() noexcept { return write_execution_report(w, buf, sizeof buf, seq++, utc_now_ns()); };
  n = op();
  if (n == 0 || frame(std::string_view(buf, n)).status != FrameStatus::complete) {
    state.SkipWithError("Kite wrote no valid message");
    return;
  }
  count_allocs(state, [&] { keep(op()); });
  for (auto _ : state) {
    n = op();
    char* p = buf;
    asm volatile("" : "+r"(p) : : "memory");  // the bytes are used
    keep(n);
  }
  state.counters["bytes"] = static_cast<double>(n);
}

void encode_quickfix(benchmark::State& state) {
  QuickfixCodec qf(dictionary_dir() + "/FIX44.xml");
  std::uint64_t seq = 1;
  std::size_t n = qf.encode(seq).size();
  count_allocs(state, [&] { keep(qf.encode(++seq).size()); });
  for (auto _ : state) {
    const std::string& s = qf.encode(++seq);
    const char* p = s.data();
    asm volatile("" : "+r"(p) : : "memory");
    n = s.size();
    keep(n);
  }
  state.counters["bytes"] = static_cast<double>(n);
}

// Where decode/kite's time goes (not part of the contract).
void parts_frame(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  for (auto _ : state) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));
    keep(frame<FastScan>(p, msg.size()).size);
  }
}
void parts_index(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  FieldIndex ix(256);
  const FrameResult fr = frame<FastScan>(msg.data(), msg.size());
  for (auto _ : state) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));
    keep(ix.build<FastScan>(p, fr).offset);
  }
}
void parts_reads(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  KiteDecoder d;
  d.decode(msg.data(), msg.size());
  for (auto _ : state) keep(d.read_eight());
}
// Frame and index of a message of N fields between the header's first two
// and CheckSum: the cost per field, and what a message costs whatever its size.
void parts_fields(benchmark::State& state) {
  const std::string msg = samples::message_of_fields(static_cast<int>(state.range(0)));
  FieldIndex ix(256);
  if (!ix.frame_and_build<FastScan>(msg.data(), msg.size()).index)
    state.SkipWithError("Kite did not index the message");
  for (auto _ : state) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));
    keep(ix.frame_and_build<FastScan>(p, msg.size()).index.offset);
  }
  state.counters["fields"] = static_cast<double>(ix.size());
}
// Frame and index only: the "decode + index under 80 ns" figure.
void frame_index_kite(benchmark::State& state) {
  const std::string msg = samples::new_order_single();
  FieldIndex ix(256);
  count_allocs(state, [&] { keep(ix.frame_and_build<FastScan>(msg.data(), msg.size()).index.offset); });
  for (auto _ : state) {
    const char* p = msg.data();
    asm volatile("" : "+r"(p));
    keep(ix.frame_and_build<FastScan>(p, msg.size()).index.offset);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * msg.size()));
}
// The least of the repetitions: the machine is shared, and noise (other
// jobs, the other hyperthread of the core) only ever adds time.
double least(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }
#define KITE_CODEC_BENCH(fn, name) BENCHMARK(fn)->Name(name)->ComputeStatistics("min", least)
KITE_CODEC_BENCH(frame_index_kite, "frame_index/kite");
KITE_CODEC_BENCH(parts_frame, "parts/frame/kite");
KITE_CODEC_BENCH(parts_index, "parts/index/kite");
KITE_CODEC_BENCH(parts_reads, "parts/reads/kite");
KITE_CODEC_BENCH(parts_fields, "parts/fields/kite")->Arg(8)->Arg(16)->Arg(32)->Arg(64)->Arg(128);
KITE_CODEC_BENCH(decode_kite, "decode/kite");
KITE_CODEC_BENCH(decode_quickfix, "decode/quickfix");
KITE_CODEC_BENCH(validate_kite, "validate/kite");
KITE_CODEC_BENCH(validate_quickfix, "validate/quickfix");
KITE_CODEC_BENCH(encode_kite, "encode/kite");
KITE_CODEC_BENCH(encode_quickfix, "encode/quickfix");
}  // namespace

// The console output, then the ratios the codec's targets are stated in,
// from this one run: the least and the median CPU time of the repetitions.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      Figures& f = figures_[r.run_name.function_name];
      const double t = r.GetAdjustedCPUTime();
      if (r.run_type == Run::RT_Iteration && r.repetitions <= 1) f.least = f.median = t;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "min") f.least = t;
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") f.median = t;
      f.unit = benchmark::GetTimeUnitString(r.time_unit);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::ostream& out = GetOutputStream();
    out << "\nKite against QuickFIX, codec level " << codec::to_string(codec::active_level())
        << ", CPU time per operation (least | median of the repetitions):\n";
    const auto line = [&](const char* what, double target) {
      const auto k = figures_.find(std::string(what) + "/kite"), q = figures_.find(std::string(what) + "/quickfix");
      if (k == figures_.end() || q == figures_.end() || k->second.least <= 0 || k->second.median <= 0) return;
      const double least = q->second.least / k->second.least, median = q->second.median / k->second.median;
      char text[256];
      std::snprintf(text, sizeof text, "  %-9s kite %8.1f | %8.1f %s   quickfix %8.1f | %8.1f %s   %5.1fx | %5.1fx",
                    what, k->second.least, k->second.median, k->second.unit, q->second.least, q->second.median,
                    q->second.unit, least, median);
      out << text;
      if (target > 0)
        out << "   (target >= " << target << "x: " << (least >= target ? "met" : "not met") << " by the least)";
      out << "\n";
    };
    line("decode", 20);
    line("validate", 0);
    line("encode", 30);
    if (const auto f = figures_.find("frame_index/kite"); f != figures_.end()) {
      char text[160];
      std::snprintf(text, sizeof text, "  frame + index of the NewOrderSingle: %.1f | %.1f %s (target < 80 ns)\n",
                    f->second.least, f->second.median, f->second.unit);
      out << text;
    }
  }

 private:
  struct Figures {
    double least = 0, median = 0;
    const char* unit = "";
  };
  std::map<std::string, Figures> figures_;
};

}  // namespace kite::bench

// With no options, a run made for ratios: 40 repetitions of at least 25 ms
// each, in random order (so slow spells of the machine fall on both sides),
// aggregates shown. Short repetitions, many of them: the machine's slow
// spells come and go every few tens of milliseconds, and a repetition has
// to fall between two of them for its time to be the undisturbed one. Any
// option given replaces these defaults. The console format gets the ratio
// table at the end; other formats are left as they are.
int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  static char repetitions[] = "--benchmark_repetitions=40", min_time[] = "--benchmark_min_time=0.025",
              interleave[] = "--benchmark_enable_random_interleaving=true",
              aggregates[] = "--benchmark_display_aggregates_only=true";
  if (argc == 1) args.insert(args.end(), {repetitions, min_time, interleave, aggregates});
  bool console = true;
  for (const char* a : args)
    if (std::strncmp(a, "--benchmark_format=", 19) == 0 && std::strcmp(a + 19, "console") != 0) console = false;
  kite::bench::set_counting(false);  // on in count_allocs only
  // The level in use (KITE_CODEC_LEVEL forces a lower one), in every format's context.
  benchmark::AddCustomContext("kite_codec_level", kite::codec::to_string(kite::codec::active_level()));
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  if (console) {
    kite::bench::RatioReporter reporter;
    benchmark::RunSpecifiedBenchmarks(&reporter);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}
