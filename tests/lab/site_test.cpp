// The current matrix composed across sittings, epochs and method versions,
// compare's refusals and settings differences, and the site's pages, over the
// fixture sittings of site_fixture.hpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "kite/lab/method.hpp"
#include "kite/lab/report.hpp"
#include "kite/lab/results.hpp"
#include "kite/lab/util.hpp"
#include "site_fixture.hpp"

using namespace kite::lab;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

class SiteTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    root_ = fs::temp_directory_path() / ("kite-site-test-" + std::to_string(getpid()));
    fs::remove_all(root_);
    test::write_site_fixtures(root_ / "results");
    hosts_ = load_results((root_ / "results").string(), &warnings_);
  }
  static void TearDownTestSuite() { fs::remove_all(root_); }

  static const Host& host(const std::string& name) {
    for (const auto& h : hosts_)
      if (h.name == name) return h;
    throw std::runtime_error("no host " + name);
  }
  static const Era& current(const std::vector<Era>& eras) {
    for (const auto& e : eras)
      if (e.current) return e;
    throw std::runtime_error("no current era");
  }
  static const StoredSitting& sitting(const std::string& name) {
    for (const auto& h : hosts_)
      for (const auto& s : h.sittings)
        if (s.name == name) return s;
    throw std::runtime_error("no sitting " + name);
  }
  static std::string page(const std::string& rel) { return read_text((root_ / "results" / "site" / rel).string()); }

  static inline fs::path root_;
  static inline std::vector<Host> hosts_;
  static inline std::vector<std::string> warnings_;
};

TEST_F(SiteTest, readsEveryHostAndSittingOldestFirst) {
  EXPECT_TRUE(warnings_.empty()) << warnings_.front();
  ASSERT_EQ(hosts_.size(), 2u);
  const Host& a = host("alpha");
  ASSERT_EQ(a.sittings.size(), 7u);
  EXPECT_EQ(a.sittings.front().name, "a-epoch-old");
  EXPECT_EQ(a.sittings.back().name, "h-load-sweep");
}

TEST_F(SiteTest, splitsAHostIntoErasByEpochAndMethod) {
  std::vector<Era> eras = eras_of(host("alpha"));
  ASSERT_EQ(eras.size(), 3u);
  EXPECT_EQ(eras[0].cpu_model, "Test CPU 6154");
  EXPECT_FALSE(eras[0].current);
  EXPECT_EQ(eras[1].method, "v0");
  EXPECT_FALSE(eras[1].current) << "an older method on the current hardware is an archive";
  EXPECT_TRUE(eras[2].current);
  EXPECT_EQ(eras[2].method, kMethodVersion);
  EXPECT_EQ(eras[2].sittings.size(), 5u) << "the load sweep is of the era too";
  EXPECT_NE(eras[0].epoch, eras[2].epoch);
  EXPECT_EQ(eras[1].epoch, eras[2].epoch);
}

TEST_F(SiteTest, theSameModelStringWithOtherDispatchFeaturesIsAnotherEpoch) {
  CpuIdentity with = test::fixture_cpu_new().id, without = with;
  without.features = {"sse4_2", "popcnt", "bmi2", "avx2"};
  EXPECT_NE(epoch_of("AMD EPYC", with), epoch_of("AMD EPYC", without));
  EXPECT_EQ(epoch_of("AMD EPYC", with), epoch_of("AMD EPYC", with));
  CpuIdentity stepping = with;
  stepping.stepping = 8;
  EXPECT_NE(epoch_of("AMD EPYC", with), epoch_of("AMD EPYC", stepping));
}

TEST_F(SiteTest, aMachineFileCpuTableSetsTheIdentity) {
  Machine m = parse_machine(
      "name = \"h\"\ncpu_model = \"X\"\n[cpu]\nvendor = \"GenuineIntel\"\nfamily = 6\nmodel = 85\n"
      "stepping = 7\nfeatures = [\"avx512bw\", \"avx2\"]\n[cores]\nserver = \"0\"\nclient = \"1\"\n",
      "h.toml");
  EXPECT_EQ(m.cpu.stepping, 7);
  EXPECT_EQ(m.cpu.features, (std::vector<std::string>{"avx2", "avx512bw"})) << "features in one order";
  EXPECT_EQ(m.epoch, epoch_of("X", m.cpu));
  EXPECT_THROW(
      parse_machine("name = \"h\"\ncpu_model = \"X\"\n[cpu]\nvendor = \"GenuineIntel\"\nfamily = 6\nmodel = 85\n"
                    "stepping = 7\nfeatures = [\"avx9000\"]\n[cores]\nserver = \"0\"\nclient = \"1\"\n",
                    "h.toml"),
      ConfigError);
}

TEST_F(SiteTest, theCurrentMatrixTakesTheNewestMeasuredResultWithTheReferenceSettings) {
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  ASSERT_NE(m.reference, nullptr);
  EXPECT_EQ(m.reference->name, "c-base") << "the netns sweep overrides the network: not the reference";
  // The cpp kernel single/mono cells come from the re-run, the rest from the base sitting.
  const ComposedCell* single = m.at({"cpp", "kernel", "single", "closed"});
  ASSERT_NE(single, nullptr);
  EXPECT_EQ(single->from->name, "e-cpp-rerun");
  EXPECT_EQ(m.at({"cpp", "vma", "single", "closed"})->from->name, "c-base");
  EXPECT_EQ(m.at({"cpp", "kernel", "mono", "closed"})->shown->verdict, "partial");
  EXPECT_EQ(m.at({"quickfix", "kernel", "single", "closed"})->from->name, "c-base");
}

TEST_F(SiteTest, aQuickSittingNeverEntersTheCurrentMatrix) {
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  for (const auto& [id, c] : m.cells) {
    EXPECT_NE(c.from->name, "d-quick") << id;
    EXPECT_NE(c.shown->p50("service"), test::kQuickOnlyP50) << id;
  }
  std::vector<std::string> left;
  for (const auto* s : m.left_out) left.push_back(s->name);
  EXPECT_THAT(left, ::testing::UnorderedElementsAre("d-quick", "f-netns-sweep"));
}

TEST_F(SiteTest, aNewerRefusalKeepsTheOlderMeasurementAndIsNamed) {
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  const ComposedCell* c = m.at({"cpp", "kernel", "single", "open"});
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->shown->measured());
  EXPECT_EQ(c->from->name, "c-base");
  ASSERT_NE(c->newer_unmeasured, nullptr);
  EXPECT_EQ(c->newer_unmeasured->state, CellState::refused);
  EXPECT_EQ(c->newer_from->name, "e-cpp-rerun");
}

TEST_F(SiteTest, aCellNeverMeasuredShowsItsRefusalMarkerOrState) {
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  EXPECT_EQ(m.at({"cpp", "kernel", "pool", "open"})->shown->word(), "refused");
  EXPECT_EQ(m.at({"cpp", "tcpdirect", "pool", "closed"})->shown->word(), "nopool");
  EXPECT_EQ(m.at({"cpp", "tcpdirect", "shard", "closed"})->shown->word(), "noshard");
  EXPECT_EQ(m.at({"cpp", "onload", "single", "closed"})->shown->word(), "unmeasurable");
  EXPECT_EQ(m.at({"quickfix", "vma", "single", "closed"})->shown->word(), "unsupported");
  EXPECT_EQ(m.at({"raw", "vma", "pool", "closed"})->shown->word(), "oversubscribed");
  EXPECT_EQ(m.at({"rust-pure", "kernel", "single", "closed"})->shown->word(), "unbuilt");
  EXPECT_EQ(m.at({"raw", "kernel", "pool", "closed"})->shown->word(), "error");
  EXPECT_EQ(m.at({"quickfix", "kernel", "mono", "open"})->shown->word(), "saturated");
}

TEST_F(SiteTest, noFigureOfAnotherEpochOrMethodIsComposedIntoTheCurrentMatrix) {
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  for (const auto& [id, c] : m.cells) {
    EXPECT_NE(c.shown->p50("service"), 777.77) << id;
    EXPECT_NE(c.shown->p50("service"), 888.88) << id;
  }
  std::vector<Era> eras = eras_of(host("alpha"));
  ComposedMatrix old = compose_era(eras[0]);
  EXPECT_EQ(old.at({"cpp", "kernel", "single", "closed"})->shown->p50("service"), 777.77);
  EXPECT_EQ(old.at({"cpp", "vma", "single", "closed"}), nullptr);
}

TEST_F(SiteTest, rowsAndColumnsFollowTheLabsOrderWithCppFirst) {
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  ASSERT_FALSE(m.rows.empty());
  EXPECT_EQ(m.rows.front(), "kernel/single");
  EXPECT_EQ(m.rows[1], "kernel/mono");
  EXPECT_EQ(m.cols.front(), (std::pair<std::string, std::string>{"closed", "cpp"}));
  EXPECT_EQ(m.cols.back().first, "open");
}

TEST_F(SiteTest, compareRefusesTwoMethodVersionsAndTwoEpochs) {
  Comparison c = compare(sitting("b-method-old"), sitting("c-base"), {});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.refusal, HasSubstr("method v0"));
  EXPECT_THAT(c.refusal, HasSubstr("never compared"));
  Comparison e = compare(sitting("a-epoch-old"), sitting("c-base"), {});
  EXPECT_FALSE(e.ok);
  EXPECT_THAT(e.refusal, HasSubstr("Test CPU 6154"));
  EXPECT_THAT(e.refusal, HasSubstr("Test CPU 6254"));
  EXPECT_THAT(e.refusal, HasSubstr("stepping 4"));
}

TEST_F(SiteTest, compareNamesTheSettingsThatDifferBesideTheRowsTheyTouch) {
  Comparison c = compare(sitting("e-cpp-rerun"), sitting("f-netns-sweep"), {});
  ASSERT_TRUE(c.ok) << c.refusal;
  std::string md = comparison_markdown(c);
  EXPECT_THAT(md, HasSubstr("network loopback -> netns: every row"));
  EXPECT_THAT(md, HasSubstr("busy_poll_usecs 0 -> 50"));
  EXPECT_THAT(md, HasSubstr("binary 8813683d5a1f -> 5438e44ecc8e"));
  EXPECT_THAT(md, HasSubstr("| Settings that differ |"));
  Comparison same = compare(sitting("c-base"), sitting("e-cpp-rerun"), {});
  ASSERT_TRUE(same.ok);
  EXPECT_THAT(comparison_markdown(same), Not(HasSubstr("network loopback")));
  EXPECT_THAT(comparison_markdown(same), HasSubstr("- cpp/kernel/mono/closed: ok to partial"));
}

TEST_F(SiteTest, theSiteWritesEveryViewWithTheDataEmbedded) {
  build_site((root_ / "results").string());
  std::string index = page("index.html");
  EXPECT_THAT(index, HasSubstr("alpha/index.html"));
  EXPECT_THAT(index, HasSubstr("beta/index.html"));
  std::string cur = page("alpha/index.html");
  EXPECT_THAT(cur, HasSubstr("data-cell=\"cpp/kernel/single/closed\""));
  EXPECT_THAT(cur, Not(HasSubstr("999.99")));
  EXPECT_THAT(cur, Not(HasSubstr("777.77")));
  EXPECT_THAT(cur, HasSubstr("not a same-sitting control"));
  EXPECT_THAT(cur, HasSubstr("archive/"));
  // The CDF is in the page, not fetched.
  std::string cell = page("alpha/cell/cpp_kernel_single_closed.html");
  EXPECT_THAT(cell, HasSubstr("id=\"cdf-data\""));
  EXPECT_THAT(cell, HasSubstr("\"label\":\"quickfix\""));
  EXPECT_THAT(cell, Not(HasSubstr("fetch(")));
  std::vector<Era> eras = eras_of(host("alpha"));
  std::string old = page("alpha/archive/" + eras[0].id() + "/index.html");
  EXPECT_THAT(old, HasSubstr("Hardware epoch boundary"));
  EXPECT_THAT(old, HasSubstr("777.77"));
  std::string method = page("alpha/archive/" + eras[1].id() + "/index.html");
  EXPECT_THAT(method, HasSubstr("Historical method v0 archive"));
  EXPECT_TRUE(fs::exists(root_ / "results" / "site" / "alpha" / "compare-data.js"));
  EXPECT_TRUE(fs::exists(root_ / "results" / "site" / "alpha" / "host.html"));
  EXPECT_TRUE(fs::exists(root_ / "results" / "site" / "alpha" / "sitting" / "d-quick" / "index.html"));
}

TEST_F(SiteTest, aLoadSweepIsReadWithItsSeriesAndNeverEntersTheMatrix) {
  const StoredSitting& sweep = host("alpha").sittings.back();
  ASSERT_TRUE(sweep.sweep);
  EXPECT_EQ(sweep.matrix_name, "sweep");
  EXPECT_FALSE(sweep.runs_reference_matrix()) << "its recorded matrix text is the default's, but it is a sweep";
  ASSERT_EQ(sweep.sweeps.size(), 3u);
  for (const auto& d : sweep.sweeps) EXPECT_THAT(d.value("file", ""), HasSubstr("alpha/h-load-sweep/sweep/"));
  ComposedMatrix m = compose_era(current(eras_of(host("alpha"))));
  ASSERT_NE(m.reference, nullptr);
  EXPECT_EQ(m.reference->name, "c-base");
  EXPECT_EQ(std::count(m.used.begin(), m.used.end(), &sweep), 0);
  EXPECT_EQ(std::count(m.left_out.begin(), m.left_out.end(), &sweep), 0);
}

TEST_F(SiteTest, aSweepHasItsPageWithBothChartsTheirDataAndEveryStep) {
  build_site((root_ / "results").string());
  const std::string sw = page("alpha/sweep/h-load-sweep.html");
  EXPECT_THAT(sw, HasSubstr("Latency against offered rate"));
  EXPECT_THAT(sw, HasSubstr("Latency against sessions"));
  EXPECT_THAT(sw, HasSubstr("id=\"sweep-rate-data\""));
  EXPECT_THAT(sw, HasSubstr("id=\"sweep-sessions-data\""));
  EXPECT_THAT(sw, HasSubstr("\"flavour\":\"quickfix\""));
  EXPECT_THAT(sw, HasSubstr("\"knee\":40000"));
  EXPECT_THAT(
      sw,
      HasSubstr("Knee: 40000/s (the highest step not saturated); saturated from 80000/s: the server was the limit"));
  EXPECT_THAT(sw, HasSubstr("the client could not keep its schedule there"));
  EXPECT_THAT(sw, HasSubstr("Server memory per session: 40960 bytes"));
  EXPECT_THAT(sw, HasSubstr("4321.50")) << "the saturated step's figure is in its table";
  EXPECT_THAT(sw, HasSubstr("1000 sessions left out"));
  EXPECT_THAT(sw, HasSubstr("assets/uPlot")) << "the chart library is loaded (or the page says it is missing)";
  const std::string hostpage = page("alpha/index.html");
  EXPECT_THAT(hostpage, HasSubstr("href=\"sweep/h-load-sweep.html\""));
  EXPECT_THAT(hostpage, HasSubstr("cpp rate knee 40000/s"));
  EXPECT_THAT(hostpage, HasSubstr("cpp sessions knee 512 sessions"));
  EXPECT_THAT(hostpage, HasSubstr("../alpha/sweep/h-load-sweep.html")) << "every-sitting row links its sweep page";
  EXPECT_FALSE(fs::exists(root_ / "results" / "site" / "alpha" / "sitting" / "h-load-sweep"));
}

// Two paired (v2) sittings of one group on a host of their own: the matrix
// shows each ratio, the cell page races the group with words for level, the
// CDF overlay keeps to the group, and compare reports ratio changes.
class PairedSiteTest : public ::testing::Test {
 protected:
  static test::detail::CellSpec member(const std::string& flavour, double p50, nlohmann::json ratio, const std::string& verdict) {
    test::detail::CellSpec c = test::detail::cell_spec(flavour, "kernel", "single", "closed");
    c.p50 = p50;
    c.pairing = {{"mode", "rounds"},
                 {"group", "kernel/single/closed"},
                 {"members", nlohmann::json::array({"cpp", "raw", "quickfix"})},
                 {"reference", "cpp"},
                 {"seed", 7},
                 {"rounds", 9},
                 {"stop", "target"},
                 {"target", 0.05},
                 {"resolution", 0.02},
                 {"width_reached", 0.04},
                 {"ratio", ratio}};
    if (!verdict.empty()) c.pairing["verdict"] = verdict;
    return c;
  }
  static nlohmann::json ratio(double m, double lo, double hi) { return {{"median", m}, {"low", lo}, {"high", hi}}; }

  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kite-paired-site-" + std::to_string(getpid()));
    fs::remove_all(root_);
    const auto cpu = test::fixture_cpu_new();
    auto a = test::detail::sitting_spec("gamma", "p1", "2026-12-01T10:00:00Z", cpu, kMethodVersion, "default");
    auto b = test::detail::sitting_spec("gamma", "p2", "2026-12-02T10:00:00Z", cpu, kMethodVersion, "default");
    test::detail::write_sitting(root_ / "results", a,
                        {member("cpp", 10, nullptr, ""), member("raw", 9.9, ratio(0.99, 0.985, 1.004), "level"),
                         member("quickfix", 19, ratio(1.90, 1.85, 1.95), "slower")});
    test::detail::write_sitting(root_ / "results", b,
                        {member("cpp", 10, nullptr, ""), member("raw", 9.5, ratio(0.95, 0.93, 0.97), "faster"),
                         member("quickfix", 19, ratio(1.91, 1.86, 1.97), "slower")});
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string page(const std::string& rel) { return read_text((root_ / "results" / "site" / rel).string()); }
  fs::path root_;
};

TEST_F(PairedSiteTest, theMatrixShowsRatiosAndTheCellPageRacesTheGroup) {
  build_site((root_ / "results").string());
  const std::string cur = page("gamma/index.html");
  EXPECT_THAT(cur, HasSubstr("&times;1.910 [1.860, 1.970] slower"));
  EXPECT_THAT(cur, HasSubstr("ratio r-reference"));
  EXPECT_THAT(cur, Not(HasSubstr("No sitting of this host was measured with the current method")));
  const std::string cell = page("gamma/cell/quickfix_kernel_single_closed.html");
  EXPECT_THAT(cell, HasSubstr("<h2>Race</h2>"));
  EXPECT_THAT(cell, HasSubstr("faster than cpp by 5.0%"));
  EXPECT_THAT(cell, HasSubstr("slower than cpp by 91.0%"));
  EXPECT_THAT(cell, HasSubstr("the same rounds of this sitting"));
  // Ranked by ratio: raw before cpp before quickfix.
  EXPECT_LT(cell.find("<th>raw</th>"), cell.find("<th>cpp</th>"));
  EXPECT_LT(cell.find("<th>cpp</th>"), cell.find("<th>quickfix</th>"));
}

TEST_F(PairedSiteTest, compareReportsRatioChangesOnlyBeyondTheIntervals) {
  const auto hosts = load_results((root_ / "results").string());
  ASSERT_EQ(hosts.size(), 1u);
  ASSERT_EQ(hosts[0].sittings.size(), 2u);
  Comparison c = compare(hosts[0].sittings[0], hosts[0].sittings[1], {});
  ASSERT_TRUE(c.ok) << c.refusal;
  EXPECT_EQ(c.reference, "cpp");
  ASSERT_EQ(c.ratios.size(), 2u);
  const std::string md = comparison_markdown(c);
  EXPECT_THAT(md, HasSubstr("## Ratios to cpp (paired rounds)"));
  EXPECT_THAT(
      md,
      HasSubstr("| kernel/single/closed | raw | 0.990 [0.985, 1.004] level | 0.950 [0.930, 0.970] faster | down |"));
  EXPECT_THAT(
      md,
      HasSubstr(
          "| kernel/single/closed | quickfix | 1.900 [1.850, 1.950] slower | 1.910 [1.860, 1.970] slower | same |"));
}

}  // namespace

// compare as the seeds print it, against tests/lab/compare_seed.md: Before /
// Now / peer tables of p50, p99 and max with the change in percent, a Now
// column composed from two sittings (the older one's row dated), the peer
// column from a third sitting, and where both columns come from. raw stands
// in for rust-pure, cpp is the peer.
TEST(CompareAsTheSeeds, markdownMatchesTheFixture) {
  const fs::path results = fs::temp_directory_path() / ("kite-compare-seed-" + std::to_string(getpid()));
  fs::remove_all(results);
  auto spec = [&](const std::string& name, const std::string& start, const std::string& sha) {
    auto s = test::detail::sitting_spec("scan", name, start, test::fixture_cpu_new(), "v1", "default");
    s.binary_sha = sha;
    return s;
  };
  auto cell = [](const std::string& f, const std::string& m, const std::string& l, double p50) {
    auto c = test::detail::cell_spec(f, "kernel", m, l);
    c.p50 = p50;
    return c;
  };
  const std::string old_sha = "d6ede28d00000000000000000000000000000000000000000000000000000001";
  const std::string new_sha = "8813683d00000000000000000000000000000000000000000000000000000002";
  test::detail::write_sitting(results, spec("rp-before", "2026-10-02T08:00:00Z", old_sha),
                      {cell("raw", "single", "closed", 20.89), cell("raw", "mono", "closed", 244.45),
                       cell("raw", "mono", "open", 53.905)});
  test::detail::write_sitting(results, spec("rp-single-open", "2026-10-12T08:00:00Z", new_sha),
                      {cell("raw", "single", "open", 18.284)});
  test::detail::write_sitting(results, spec("rp-now", "2026-10-13T08:00:00Z", new_sha),
                      {cell("raw", "single", "closed", 18.33), cell("raw", "mono", "closed", 162.65),
                       cell("raw", "mono", "open", 51.607)});
  test::detail::write_sitting(results, spec("cpp-installed", "2026-10-16T08:00:00Z", new_sha),
                      {cell("cpp", "single", "closed", 17.68), cell("cpp", "mono", "closed", 139.58),
                       cell("cpp", "single", "open", 17.755), cell("cpp", "mono", "open", 49.342)});
  const std::string d = (results / "scan").string();
  CompareOptions o;
  o.flavour = "raw";
  o.peer = "cpp";
  o.peer_from = {d + "/cpp-installed"};
  CompareResult r = compare_sittings(d + "/rp-before", {d + "/rp-now", d + "/rp-single-open"}, o);
  ASSERT_TRUE(r.ok) << r.text;
  const char* src = std::getenv("KITE_SOURCE_DIR");
  const std::string fixture = std::string(src ? src : ".") + "/tests/lab/compare_seed.md";
  if (std::getenv("KITE_UPDATE_FIXTURES")) write_text_atomic(fixture, r.text);
  EXPECT_EQ(r.text, read_text(fixture)) << "to accept a deliberate change: KITE_UPDATE_FIXTURES=1";
  o.format = "text";
  const std::string text = compare_sittings(d + "/rp-before", {d + "/rp-now", d + "/rp-single-open"}, o).text;
  EXPECT_THAT(text, HasSubstr("| kernel/single | 20.89  | 18.33"));
  o.format = "html";
  EXPECT_THROW(compare_sittings(d + "/rp-before", {d + "/rp-now"}, o), ConfigError);
  fs::remove_all(results);
}
