// Fixture sittings for the results page and its composition: written as
// bench-run writes them (sitting.json and one result per cell), with figures
// made up so that every case the page must handle is present:
//
//   host alpha
//     a-epoch-old    2026-09-01  an older hardware epoch (Test CPU 6154), method v1
//     b-method-old   2026-09-20  the current epoch, an older method (v0)
//     c-base         2026-10-01  the current epoch and method, the default matrix: cpp, quickfix, raw,
//                                rust-pure (unbuilt) x kernel, onload (unmeasurable), vma, tcpdirect x four
//                                models x closed, open: every marker, a refused cell (cpp/kernel/pool/open),
//                                a saturated cell (quickfix/kernel/mono/open), a cell in error
//     d-quick        2026-10-05  the quick matrix (2 runs): cpp/kernel/single/closed at 999.99 us, never current
//     e-cpp-rerun    2026-10-10  the reference settings, another matrix and binary: cpp kernel single and mono;
//                                cpp/kernel/mono/closed turns ok -> partial, cpp/kernel/single/open is refused
//                                (the current matrix keeps c-base's figure and names the refusal)
//     f-netns-sweep  2026-10-12  the default matrix with --network netns --busy-poll-usecs 50: other settings
//     h-load-sweep   2026-10-14  a load sweep (bench-run sweep, recording the default matrix's text): cpp and
//                                quickfix rate series (knees 40000/s and 10000/s; quickfix's client-limited),
//                                cpp sessions series (knee 512); it never enters or sets the current matrix
//   host beta
//     g-beta         2026-10-03  another host, one sitting
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kite/lab/config.hpp"
#include "kite/lab/method.hpp"

namespace kite::lab::test {

struct FixtureCpu {
  std::string model;
  CpuIdentity id;
};

inline FixtureCpu fixture_cpu_old() {
  return {"Test CPU 6154",
          {"GenuineIntel", 6, 85, 4, {"sse4_2", "popcnt", "bmi2", "avx2", "avx512f", "avx512bw", "avx512vl"}}};
}
inline FixtureCpu fixture_cpu_new() {
  return {"Test CPU 6254",
          {"GenuineIntel", 6, 85, 7, {"sse4_2", "popcnt", "bmi2", "avx2", "avx512f", "avx512bw", "avx512vl"}}};
}
inline FixtureCpu fixture_cpu_beta() {
  return {"Test EPYC", {"AuthenticAMD", 25, 1, 1, {"sse4_2", "popcnt", "bmi2", "avx2"}}};
}

/// The figures of the fixture cpp/kernel/single/closed cell in d-quick: must never reach the current matrix.
inline constexpr double kQuickOnlyP50 = 999.99;

namespace detail {

using json = nlohmann::json;

inline std::string matrix_text(const std::string& name, int runs, int mono_sessions,
                               const std::vector<std::string>& flavours) {
  std::string f;
  for (const auto& x : flavours) f += (f.empty() ? "\"" : ", \"") + x + "\"";
  return "name = \"" + name + "\"\nflavours = [" + f +
         "]\ntransports = [\"kernel\"]\nmodels = [\"single\", \"mono\", \"pool\", \"shard\"]\nloops = [\"closed\", "
         "\"open\"]\nidle = \"spin\"\nruns = " +
         std::to_string(runs) +
         "\nwarmup_s = 0.5\nduration_s = 1.0\n[sessions]\nsingle = 1\nmono = " + std::to_string(mono_sessions) +
         "\npool = 32\nshard = 32\n[open]\nrate = 20000\n";
}

inline std::string machine_text(const std::string& host, const FixtureCpu& cpu) {
  return "name = \"" + host + "\"\ncpu_model = \"" + cpu.model +
         "\"\nnotes = [\"isolcpus=8-17\"]\n[cores]\nhousekeeping = \"0-7\"\ncoordinator = 8\nserver = \"9-12\"\n"
         "reserved = \"13\"\nclient = \"14-17\"\n[network]\npath = \"loopback\"\n[transports]\navailable = "
         "[\"kernel\", \"vma\", \"tcpdirect\"]\n";
}

// A CDF of `n` points from a log-normal around p50 with a long tail.
inline json cdf(double p50, int n) {
  json out = json::array();
  for (int i = 0; i < n; ++i) {
    double q = (i + 0.5) / n;
    double z = std::sqrt(2.0) * std::erf(2 * q - 1);  // a monotone stand-in for the normal quantile
    double v = p50 * std::exp(0.25 * z + (q > 0.99 ? 6 * (q - 0.99) * 100 / 100 : 0));
    out.push_back({std::round(v * 1000) / 1000, q});
  }
  return out;
}

inline json latency(double p50) {
  return {{"p50", p50},      {"p90", p50 * 1.3}, {"p99", p50 * 2.5},
          {"p999", p50 * 5}, {"max", p50 * 20},  {"mean_max", p50 * 12}};
}

struct SittingSpec {
  std::string host, name, start;
  FixtureCpu cpu;
  std::string method;  // "" : none recorded (the lab before methods)
  std::string matrix;  // matrix name
  int runs = 5, mono_sessions = 32;
  std::string network = "loopback";
  int busy_poll = 0;
  json overrides = json::object();
  std::string binary_sha = "5438e44ecc8e45f40580b9164ef77095ca1b3e8704a622ec7c0f801100be9756";
  std::string git = "2e1d2a494cca";
  std::vector<std::string> flavours = {"cpp", "quickfix", "raw"};
};

struct CellSpec {
  std::string flavour, transport, model, loop;
  std::string state = "measured";  // measured, refused, marked, unbuilt, error
  std::string marker, verdict = "ok", reason;
  double p50 = 10;
  std::vector<std::string> reasons;
  json pairing;  ///< a paired (v2) result's `pairing`; null for a sequential one
};

inline CellSpec cell_spec(const std::string& f, const std::string& t, const std::string& m, const std::string& l) {
  CellSpec c;
  c.flavour = f;
  c.transport = t;
  c.model = m;
  c.loop = l;
  return c;
}

inline SittingSpec sitting_spec(const std::string& host, const std::string& name, const std::string& start,
                                const FixtureCpu& cpu, const std::string& method, const std::string& matrix) {
  SittingSpec s;
  s.host = host;
  s.name = name;
  s.start = start;
  s.cpu = cpu;
  s.method = method;
  s.matrix = matrix;
  return s;
}

inline void write_json(const std::filesystem::path& p, const json& j) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << j.dump(1);
}

inline void write_sitting(const std::filesystem::path& results, const SittingSpec& s,
                          const std::vector<CellSpec>& cells) {
  const auto dir = results / s.host / s.name;
  json binaries = {
      {"build/release/bench_roundtrip",
       {{"sha256", s.binary_sha},
        {"used_by", json::array({"client", "server:cpp", "server:quickfix", "server:raw"})},
        {"version", "bench_roundtrip git=" + s.git + " compiler=\"GNU 12.2.0\" build_flags=\"-O3 -DNDEBUG\""}}}};
  json st = {
      {"schema", 1},
      {"sitting", s.name},
      {"host", s.host},
      {"machine", s.host},
      {"kernel", "6.1.0-test"},
      {"cpu_model", s.cpu.model},
      {"cpu",
       {{"vendor", s.cpu.id.vendor},
        {"family", s.cpu.id.family},
        {"model", s.cpu.id.model},
        {"stepping", s.cpu.id.stepping},
        {"features", s.cpu.id.features}}},
      {"epoch", epoch_of(s.cpu.model, s.cpu.id)},
      {"binaries", binaries},
      {"installs", json::array()},
      {"git", {{"revision", s.git + "0000000000000000000000000000"}, {"dirty", false}}},
      {"sysctls", {{"net.core.busy_poll", "0"}, {"isolcpus", "8-17"}}},
      {"online_cores", "0-19"},
      {"machine_notes", json::array({"isolcpus=8-17"})},
      {"machine_source", "lab/machines/" + s.host + ".toml"},
      {"machine_file", machine_text(s.host, s.cpu)},
      {"matrix_source", "lab/matrices/" + s.matrix + ".toml"},
      {"matrix_file", matrix_text(s.matrix, s.runs, s.mono_sessions, s.flavours)},
      {"overrides", s.overrides},
      {"effective",
       {{"busy_poll_usecs", s.busy_poll}, {"idle", "spin"}, {"network", s.network}, {"audit", true}, {"check", true}}},
      {"command_line", "bench-run --sitting " + s.name},
      {"start", s.start},
      {"end", s.start.substr(0, 11) + "23:59:00Z"}};
  if (!s.method.empty()) st["method"] = {{"version", s.method}, {"summary", "fixture"}};
  write_json(dir / "sitting.json", st);
  for (const auto& c : cells) {
    json j = {{"schema", 1},
              {"cell", {{"flavour", c.flavour}, {"transport", c.transport}, {"model", c.model}, {"loop", c.loop}}}};
    if (!s.method.empty()) j["method"] = s.method;
    const bool figures = c.state == "measured" || c.state == "refused";
    if (!figures) {
      if (!c.marker.empty()) j["marker"] = c.marker;
      j["verdict"] = nullptr;
      j["lab"] = {{"state", c.state}, {"reason", c.reason.empty() ? c.marker : c.reason}};
      write_json(dir / (c.flavour + "_" + c.transport + "_" + c.model + "_" + c.loop + ".json"), j);
      continue;
    }
    const bool open = c.loop == "open";
    int sessions = c.model == "single" ? 1 : c.model == "mono" ? s.mono_sessions : 32;
    j["sessions"] = sessions;
    j["rate"] = open ? 20000.0 : 0.0;
    j["think_us"] = 0.0;
    j["warmup_s"] = 0.5;
    j["duration_s"] = 1.0;
    j["idle"] = "spin";
    j["clock"] = {{"method", "tsc"}, {"tsc_ghz", 3.1}};
    json runs = json::array();
    for (int r = 0; r < s.runs; ++r) {
      double p = c.p50 * (1 + 0.01 * r);
      json run = {{"count", 20000},
                  {"errors", 0},
                  {"achieved_rate", open ? 20000.0 : 80000.0},
                  {"max_in_flight", open ? 3 : sessions},
                  {"cap_hits", 0},
                  {"complete", true},
                  {"service", latency(p)}};
      if (open) run["response"] = latency(p * 1.1);
      runs.push_back(run);
    }
    json summary = {{"service", latency(c.p50)},
                    {"cv", {{"p50", c.verdict == "partial" ? 0.21 : 0.02}, {"p99", 0.05}}},
                    {"achieved_rate", open ? (c.verdict == "saturated" ? 15000.0 : 20000.0) : 80000.0},
                    {"count", 20000 * s.runs},
                    {"errors", 0},
                    {"max_in_flight", open ? 3 : sessions},
                    {"cap_hits", 0}};
    if (open) summary["response"] = latency(c.p50 * 1.1);
    j["runs"] = runs;
    j["summary"] = summary;
    j["thresholds"] = {{"cv_p50", 0.1}, {"cv_p99", 0.25}, {"rate_fraction", 0.99}, {"response_over_service", 2.0}};
    j["cdf"] = cdf(open ? c.p50 * 1.1 : c.p50, 1000);
    j["verdict"] = c.verdict;
    j["verdict_reasons"] = c.reasons;
    if (!c.pairing.is_null()) j["pairing"] = c.pairing;
    j["stamp"] = {
        {"client",
         {{"binary", "bench_roundtrip"}, {"git", s.git}, {"build_flags", "-O3 -DNDEBUG"}, {"compiler", "GNU 12.2.0"}}},
        {"sitting", {{"sitting", s.name}, {"machine", s.host}, {"epoch", st["epoch"]}}},
        {"effective",
         {{"network", s.network},
          {"busy_poll_usecs", s.busy_poll},
          {"idle", "spin"},
          {"sessions", sessions},
          {"server_argv", json::array({"bench_roundtrip", "server", "--flavour", c.flavour})},
          {"client_argv", json::array({"bench_roundtrip", "client", "--loop", c.loop})},
          {"server_env", json::object()},
          {"client_env", json::object()},
          {"cores", {{"server", "9"}, {"client", "14"}, {"coordinator", 8}}},
          {"transport", {{"name", c.transport}}},
          {"server_build", {{"from", "build tree"}, {"sha256", s.binary_sha}}}}}};
    j["audit"] = {{"enabled", true},
                  {"passed", c.state != "refused"},
                  {"samples", 25},
                  {"violating_samples", c.state == "refused" ? 3 : 0},
                  {"inconclusive_retries", 0},
                  {"threads", {{"server 100 kite-single", "9"}, {"client 101 kite-client", "14"}}},
                  {"violations", c.state == "refused"
                                     ? json::array({"foreign-burner pid 4242 (kworker) on core 9: 61% of a sample"})
                                     : json::array()},
                  {"reason", c.state == "refused" ? c.reason : "clean: 25 samples, 0 inconclusive"}};
    j["lab"] = {{"state", c.state}, {"reason", c.state == "refused" ? c.reason : "clean"}, {"attempts", 1}};
    if (c.state == "refused") {
      j["withheld"] = {
          {"runs", j["runs"]}, {"summary", j["summary"]}, {"cdf", j["cdf"]}, {"client_verdict", c.verdict}};
      j.erase("runs");
      j.erase("summary");
      j.erase("cdf");
      j["verdict"] = "refused";
    }
    write_json(dir / (c.flavour + "_" + c.transport + "_" + c.model + "_" + c.loop + ".json"), j);
  }
}

inline double base_p50(const std::string& flavour, const std::string& transport, const std::string& model) {
  double t = transport == "kernel" ? 18 : transport == "vma" ? 7 : transport == "tcpdirect" ? 5 : 6;
  double m = model == "single" ? 1 : model == "mono" ? 4 : model == "pool" ? 2.5 : 2.8;
  double f = flavour == "quickfix" ? 1.9 : flavour == "raw" ? 0.6 : 1;
  return std::round(t * m * f * 100) / 100;
}

// Every cell of a default matrix over kernel, onload, vma, tcpdirect with the markers the lab gives them.
inline std::vector<CellSpec> full_cells(const std::vector<std::string>& flavours, double scale) {
  std::vector<CellSpec> out;
  for (const std::string t : {"kernel", "onload", "vma", "tcpdirect"})
    for (const std::string m : {"single", "mono", "pool", "shard"})
      for (const std::string l : {"closed", "open"})
        for (const auto& f : flavours) {
          CellSpec c = cell_spec(f, t, m, l);
          c.p50 = base_p50(f, t, m) * scale;
          if (t == "tcpdirect" && (m == "pool" || m == "shard")) {
            c.state = "marked";
            c.marker = m == "pool" ? "nopool" : "noshard";
          } else if (t == "vma" && m == "shard") {
            c.state = "marked";
            c.marker = "noshard";
          } else if (t == "onload") {
            c.state = "marked";
            c.marker = "unmeasurable";
            c.reason = "unmeasurable: this host has no onload";
          } else if (f == "quickfix" && (m == "pool" || m == "shard" || t != "kernel")) {
            c.state = "marked";
            c.marker = "unsupported";
            c.reason = "unsupported: quickfix does not declare it";
          } else if (f == "raw" && m == "shard" && t == "vma") {
            c.state = "marked";
            c.marker = "noshard";
          } else if (f == "raw" && m == "pool" && t == "vma") {
            c.state = "marked";
            c.marker = "oversubscribed";
            c.reason = "oversubscribed: 8 workers, 4 server cores";
          } else if (f == "rust-pure") {
            c.state = "unbuilt";
            c.reason = "server binary 'rust_pure' of flavour rust-pure is not built";
          }
          out.push_back(c);
        }
  return out;
}

}  // namespace detail

/// Writes the fixture sittings under `results` (see the top of this file).
inline void write_site_fixtures(const std::filesystem::path& results) {
  using namespace detail;
  const std::vector<std::string> four = {"cpp", "quickfix", "raw", "rust-pure"};
  // a: an older hardware epoch.
  {
    SittingSpec s =
        sitting_spec("alpha", "a-epoch-old", "2026-09-01T10:00:00Z", fixture_cpu_old(), kMethodVersion, "default");
    std::vector<CellSpec> cells;
    for (const std::string m : {"single", "mono"})
      for (const std::string l : {"closed", "open"})
        for (const std::string f : {"cpp", "quickfix"}) {
          CellSpec c = cell_spec(f, "kernel", m, l);
          c.p50 = 777.77;  // a figure that must stay on its own archive page
          cells.push_back(c);
        }
    write_sitting(results, s, cells);
  }
  // b: the current epoch, an older method.
  {
    SittingSpec s = sitting_spec("alpha", "b-method-old", "2026-09-20T10:00:00Z", fixture_cpu_new(), "v0", "default");
    std::vector<CellSpec> cells;
    for (const std::string l : {"closed", "open"}) {
      CellSpec c = cell_spec("cpp", "kernel", "single", l);
      c.p50 = 888.88;
      cells.push_back(c);
    }
    write_sitting(results, s, cells);
  }
  // c: the base sitting of the current era.
  {
    SittingSpec s =
        sitting_spec("alpha", "c-base", "2026-10-01T10:00:00Z", fixture_cpu_new(), kMethodVersion, "default");
    s.flavours = four;
    std::vector<CellSpec> cells = full_cells(four, 1.0);
    for (auto& c : cells) {
      if (c.flavour == "cpp" && c.transport == "kernel" && c.model == "pool" && c.loop == "open") {
        c.state = "refused";
        c.reason = "audit: foreign-burner pid 4242 (kworker) on core 9: 61% of a sample";
      }
      if (c.flavour == "quickfix" && c.transport == "kernel" && c.model == "mono" && c.loop == "open") {
        c.verdict = "saturated";
        c.reasons = {"achieved rate 15000/s under 0.99 of the target (20000/s)"};
      }
      if (c.flavour == "raw" && c.transport == "kernel" && c.model == "pool" && c.loop == "closed") {
        c.state = "error";
        c.reason = "attempt 1: server never became ready; attempt 2: server never became ready";
      }
      if (c.flavour == "cpp" && c.transport == "vma" && c.model == "pool" && c.loop == "closed") {
        c.verdict = "partial";
        c.reasons = {"CV of p50 0.210 over 0.100"};
      }
    }
    write_sitting(results, s, cells);
  }
  // d: a quick sitting (2 runs, 8 mono sessions): never in the current matrix.
  {
    SittingSpec s =
        sitting_spec("alpha", "d-quick", "2026-10-05T10:00:00Z", fixture_cpu_new(), kMethodVersion, "quick");
    s.runs = 2;
    s.mono_sessions = 8;
    std::vector<CellSpec> cells;
    for (const std::string m : {"single", "mono"})
      for (const std::string l : {"closed", "open"})
        for (const std::string f : {"cpp", "quickfix", "raw"}) {
          CellSpec c = cell_spec(f, "kernel", m, l);
          c.p50 = kQuickOnlyP50;
          cells.push_back(c);
        }
    write_sitting(results, s, cells);
  }
  // e: cpp re-measured with another binary, the reference settings.
  {
    SittingSpec s =
        sitting_spec("alpha", "e-cpp-rerun", "2026-10-10T10:00:00Z", fixture_cpu_new(), kMethodVersion, "cpp-rerun");
    s.binary_sha = "8813683d5a1f2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4";
    s.git = "8813683dabcd";
    s.flavours = {"cpp"};
    std::vector<CellSpec> cells;
    for (const std::string m : {"single", "mono"})
      for (const std::string l : {"closed", "open"}) {
        CellSpec c = cell_spec("cpp", "kernel", m, l);
        c.p50 = base_p50("cpp", "kernel", m) * 0.9;
        if (m == "mono" && l == "closed") {
          c.verdict = "partial";
          c.reasons = {"CV of p99 0.300 over 0.250"};
        }
        if (m == "single" && l == "open") {
          c.state = "refused";
          c.reason = "audit: off-core: thread kite-single ran on core 3";
        }
        cells.push_back(c);
      }
    write_sitting(results, s, cells);
  }
  // f: the default matrix over network namespaces with busy polling: other settings.
  {
    SittingSpec s =
        sitting_spec("alpha", "f-netns-sweep", "2026-10-12T10:00:00Z", fixture_cpu_new(), kMethodVersion, "default");
    s.network = "netns";
    s.busy_poll = 50;
    s.overrides = {{"network", "netns"}, {"busy_poll_usecs", 50}};
    std::vector<CellSpec> cells;
    for (const std::string m : {"single", "mono"})
      for (const std::string l : {"closed", "open"})
        for (const std::string f : {"cpp", "quickfix"}) {
          CellSpec c = cell_spec(f, "kernel", m, l);
          c.p50 = base_p50(f, "kernel", m) * 1.2;
          cells.push_back(c);
        }
    write_sitting(results, s, cells);
  }
  // h: a load sweep, newest of alpha, with no matrix cell.
  {
    SittingSpec s =
        sitting_spec("alpha", "h-load-sweep", "2026-10-14T10:00:00Z", fixture_cpu_new(), kMethodVersion, "default");
    write_sitting(results, s, {});
    const auto dir = results / "alpha" / "h-load-sweep";
    json st = json::parse(std::ifstream(dir / "sitting.json"));
    auto step = [](int n, int rate, int sessions, const std::string& verdict, double p50, const char* limit) {
      json lat = {{"p50", p50}, {"p99", p50 * 3}, {"p999", p50 * 5}, {"max", p50 * 9}};
      return json{{"step", n},
                  {"file", "step-0" + std::to_string(n) + ".json"},
                  {"rate", rate},
                  {"sessions", sessions},
                  {"state", "measured"},
                  {"verdict", verdict},
                  {"verdict_reasons", json::array()},
                  {"response", lat},
                  {"service", lat},
                  {"achieved_rate", rate},
                  {"max_in_flight", 4},
                  {"cap_hits", 0},
                  {"client", {{"lateness", {{"p50", 0.5}, {"p99", 2}, {"max", 9}}}, {"threads", 1}}},
                  {"limit", limit ? json(limit) : json()},
                  {"server", {{"cpu_us_per_order", 3.25}, {"rss_kb", 9000 + 40 * sessions}}}};
    };
    auto doc = [](const std::string& flavour, const std::string& series, json steps, json knee, json sat) {
      return json{{"schema", 1},          {"kind", "sweep"},
                  {"method", "v1"},       {"flavour", flavour},
                  {"series", series},     {"transport", "kernel"},
                  {"model", "mono"},      {"settings", {{"sessions", 32}, {"rate", 20000}}},
                  {"steps", steps},       {"knee", knee},
                  {"saturated_from", sat}};
    };
    write_json(dir / "sweep/cpp/rate/sweep.json",
               doc("cpp", "rate",
                   {step(1, 10000, 32, "ok", 12.5, nullptr), step(2, 20000, 32, "ok", 13.5, nullptr),
                    step(3, 40000, 32, "partial", 15.5, nullptr), step(4, 80000, 32, "saturated", 4321.5, "server")},
                   {{"rate", 40000}, {"step", 3}}, {{"rate", 80000}, {"step", 4}, {"limit", "server"}}));
    write_json(dir / "sweep/quickfix/rate/sweep.json",
               doc("quickfix", "rate",
                   {step(1, 10000, 32, "ok", 31.5, nullptr), step(2, 20000, 32, "saturated", 2345.5, "client")},
                   {{"rate", 10000}, {"step", 1}}, {{"rate", 20000}, {"step", 2}, {"limit", "client"}}));
    json sessions = doc("cpp", "sessions",
                        {step(1, 20000, 1, "ok", 11.5, nullptr), step(2, 20000, 128, "ok", 14.5, nullptr),
                         step(3, 20000, 512, "ok", 19.5, nullptr)},
                        {{"sessions", 512}, {"step", 3}}, nullptr);
    sessions["memory_per_session_bytes"] = 40960;
    write_json(dir / "sweep/cpp/sessions/sweep.json", sessions);
    st["kind"] = "sweep";
    st["sweep"] = {{"flavours", {"cpp", "quickfix"}},
                   {"series", {"rate", "sessions"}},
                   {"settings", {{"transport", "kernel"}, {"model", "mono"}}},
                   {"files",
                    {{"cpp/rate", "sweep/cpp/rate/sweep.json"},
                     {"quickfix/rate", "sweep/quickfix/rate/sweep.json"},
                     {"cpp/sessions", "sweep/cpp/sessions/sweep.json"}}},
                   {"notes", {"1000 sessions left out: the open-file limit is 1024 (ulimit -n)"}}};
    write_json(dir / "sitting.json", st);
  }
  // g: another host.
  {
    SittingSpec s =
        sitting_spec("beta", "g-beta", "2026-10-03T10:00:00Z", fixture_cpu_beta(), kMethodVersion, "default");
    std::vector<CellSpec> cells;
    for (const std::string l : {"closed", "open"})
      for (const std::string f : {"cpp", "quickfix", "raw"}) {
        CellSpec c = cell_spec(f, "kernel", "single", l);
        c.p50 = base_p50(f, "kernel", "single") * 1.4;
        cells.push_back(c);
      }
    write_sitting(results, s, cells);
  }
}

}  // namespace kite::lab::test
