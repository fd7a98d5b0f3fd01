// kite-initiator's configuration: the example of docs/initiator.md loads,
// and bad files (and bad order files) fail with a message naming the file,
// the table or session (or line), and the setting.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kite/app/initiator_daemon.hpp"

namespace kite::app::test {
namespace {

std::string docs_example() {
  const char* src = std::getenv("KITE_SOURCE_DIR");
  std::ifstream in(std::string(src ? src : ".") + "/docs/initiator.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto begin = text.find("```toml\n");
  if (begin == std::string::npos) return {};
  const auto end = text.find("```", begin + 8);
  return text.substr(begin + 8, end - begin - 8);
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const session::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::string error_of_config(const std::string& text) {
  return error_of([&] { parse_initiator_config(text, "init.toml"); });
}

const char* kSessions =
    "[defaults]\nConnectionType = \"initiator\"\nTargetCompID = \"KITE\"\nSocketConnectHost = \"127.0.0.1\"\n"
    "SocketConnectPort = 9000\n[[session]]\nSenderCompID = \"C1\"\n";

TEST(InitiatorConfig, docsExampleLoads) {
  const std::string text = docs_example();
  ASSERT_FALSE(text.empty());
  const InitiatorDaemonConfig c = parse_initiator_config(text, "docs/initiator.md");
  ASSERT_EQ(c.sessions.sessions.size(), 2u);
  EXPECT_EQ(c.sessions.sessions[0].socket_connect_port, 9876);
  EXPECT_EQ(c.sessions.sessions[0].reconnect_interval_ms, 1000);
  EXPECT_EQ(c.orders.kind, OrderSourceConfig::Kind::rate);
  EXPECT_EQ(c.orders.rate, 1000);
  EXPECT_EQ(c.orders.order.price.mantissa, 1025);
  EXPECT_EQ(c.orders.order.price.exponent, -2);
  EXPECT_EQ(c.shutdown_wait_ms, 2000);
}

TEST(InitiatorConfig, defaultsSendNothing) {
  const InitiatorDaemonConfig c = parse_initiator_config(kSessions, "x");
  EXPECT_EQ(c.orders.kind, OrderSourceConfig::Kind::none);
  EXPECT_EQ(c.engine.idle.kind, engine::IdleKind::block);
  EXPECT_EQ(c.engine.threads, 1);
}

TEST(InitiatorConfig, badSettingsNameFileTableAndSetting) {
  EXPECT_EQ(error_of_config(std::string("[orders]\nsource = \"fast\"\n") + kSessions),
            "init.toml: [orders]: setting source: expected \"none\", \"rate\" or \"file\", got \"fast\" (line 2)");
  EXPECT_EQ(error_of_config(std::string("[orders]\nsource = \"rate\"\n") + kSessions),
            "init.toml: [orders]: setting rate: source \"rate\" needs a rate above 0 (line 2)");
  EXPECT_EQ(error_of_config(std::string("[orders]\nprice = \"-1\"\n") + kSessions),
            "init.toml: [orders]: setting price: expected a positive decimal such as \"10.25\", got \"-1\" (line 2)");
  EXPECT_EQ(error_of_config(std::string("[orders]\nsource = \"file\"\nfile = \"/nonexistent/o.csv\"\n") + kSessions),
            "init.toml: [orders]: setting file: cannot read \"/nonexistent/o.csv\" (line 2)");
  EXPECT_EQ(error_of_config(std::string("[engine]\nport = 1\n") + kSessions),
            "init.toml: [engine]: setting port: unknown setting (expected one of: transport, threads, cores, idle, "
            "connect_timeout_ms, send_buffer, recv_buffer) (line 2)");
  EXPECT_EQ(error_of_config(std::string("[admin]\nsocket = \"x\"\n") + kSessions), "init.toml: [admin]: unknown table");
  EXPECT_EQ(error_of_config("[defaults]\nTargetCompID = \"KITE\"\nSocketConnectPort = 9000\n[[session]]\n"
                            "SenderCompID = \"C1\"\n"),
            "init.toml: session 1 (FIX.4.4:C1->KITE): setting ConnectionType: kite-initiator runs initiator sessions "
            "only (ConnectionType = \"initiator\")");
  EXPECT_EQ(error_of_config("[defaults]\nConnectionType = \"initiator\"\nTargetCompID = \"KITE\"\n[[session]]\n"
                            "SenderCompID = \"C1\"\n"),
            "init.toml: session 1 (FIX.4.4:C1->KITE): setting SocketConnectPort: missing (the acceptor's port)");
}

TEST(InitiatorConfig, libkitesFileIsReadByTheSameTablesWithoutTheDaemonsOwn) {
  // kite-initiator's [engine] keys, every one, in libkite's file too.
  const std::string engine =
      "[engine]\ntransport = \"kernel\"\nthreads = 2\ncores = [0]\nidle = \"spin_yield\"\n"
      "connect_timeout_ms = 500\nsend_buffer = 65536\nrecv_buffer = 32768\n";
  const InitiatorDaemonConfig lib = parse_library_initiator_config(engine + kSessions, "init.toml");
  const InitiatorDaemonConfig daemon = parse_initiator_config(engine + kSessions, "init.toml");
  for (const InitiatorDaemonConfig* c : {&lib, &daemon}) {
    EXPECT_EQ(c->engine.threads, 2);
    EXPECT_EQ(c->engine.cores, std::vector<int>{0});
    EXPECT_EQ(c->engine.idle.kind, engine::IdleKind::spin_yield);
    EXPECT_EQ(c->engine.connect_timeout_ms, 500);
    EXPECT_EQ(c->engine.send_buffer, 65536u);
    EXPECT_EQ(c->engine.recv_buffer, 32768u);
  }
  const auto lib_error = [](const std::string& text) {
    return error_of([&] { parse_library_initiator_config(text, "init.toml"); });
  };
  for (const char* bad : {"[engine]\nthreads = 0\n", "[engine]\nport = 1\n", "[engine]\nidle = \"spin\"\n",
                          "[engine]\ntransport = \"pigeon\"\n", "engine = 1\n"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(lib_error(bad + std::string(kSessions)), error_of_config(bad + std::string(kSessions)));
  }
  for (const char* table : {"orders", "app", "log"})
    EXPECT_EQ(lib_error("[" + std::string(table) + "]\n" + kSessions),
              "init.toml: [" + std::string(table) + "]: unknown table");
  EXPECT_EQ(lib_error("[defaults]\nTargetCompID = \"KITE\"\nSocketConnectPort = 9000\n[[session]]\n"
                      "SenderCompID = \"C1\"\n"),
            "init.toml: session 1 (FIX.4.4:C1->KITE): setting ConnectionType: libkite's initiator runs initiator "
            "sessions only (ConnectionType = \"initiator\")");
}

TEST(InitiatorConfig, orderFileLinesAreReadOrNamedByLine) {
  const auto lines = parse_order_lines("# side,symbol,quantity,price\nbuy,KITE,100,10.25\n\n2,ABC,5,1\r\n", "o.csv");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].side, '1');
  EXPECT_EQ(lines[0].quantity, 100);
  EXPECT_EQ(lines[1].side, '2');
  EXPECT_EQ(lines[1].symbol, "ABC");
  const auto bad = [](const std::string& text) { return error_of([&] { parse_order_lines(text, "o.csv"); }); };
  const std::string expected = " (expected \"side,symbol,quantity,price\", such as \"buy,KITE,100,10.25\")";
  EXPECT_EQ(bad("buy,KITE,100,1\nbuy,KITE,x,1\n"), "o.csv:2: quantity \"x\" is not a positive integer" + expected);
  EXPECT_EQ(bad("hold,KITE,1,1\n"), "o.csv:1: side \"hold\" is not buy, sell, 1 or 2" + expected);
  EXPECT_EQ(bad("buy,KITE,1\n"), "o.csv:1: 3 field(s)" + expected);
  EXPECT_EQ(bad("buy,KITE,1,2,3\n"), "o.csv:1: more than 4 fields" + expected);
  EXPECT_EQ(bad("buy,,1,2\n"), "o.csv:1: empty symbol" + expected);
  EXPECT_EQ(bad("buy,K,1,0\n"), "o.csv:1: price \"0\" is not a positive decimal" + expected);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string dictionaries() {
  const char* d = std::getenv("KITE_DICTIONARY_DIR");
  return d != nullptr ? d : "dictionaries";
}

std::string initiator_with(const std::string& session_lines, const std::string& orders) {
  return orders +
         "[defaults]\nConnectionType = \"initiator\"\nTargetCompID = \"KITE\"\n"
         "SocketConnectHost = \"127.0.0.1\"\nSocketConnectPort = 9000\n" +
         session_lines + "[[session]]\nSenderCompID = \"C1\"\n";
}

TEST(InitiatorOrders, eachVersionsNewOrderSingleAsItsDictionaryDefinesIt) {
  struct Case {
    const char* lines;
    bool handl_inst;
    bool transact_time;
  };
  const Case cases[] = {
      {"BeginString = \"FIX.4.0\"\n", true, false},
      {"BeginString = \"FIX.4.1\"\n", true, false},
      {"BeginString = \"FIX.4.2\"\n", true, true},
      {"BeginString = \"FIX.4.3\"\n", true, true},
      {"BeginString = \"FIX.4.4\"\n", true, true},  // defined there, optional: '1' is valid
      {"BeginString = \"FIXT.1.1\"\nDefaultApplVerID = \"FIX.5.0\"\n", true, true},
      {"BeginString = \"FIXT.1.1\"\nDefaultApplVerID = \"FIX.5.0SP1\"\n", true, true},
      {"BeginString = \"FIXT.1.1\"\nDefaultApplVerID = \"FIX.5.0SP2\"\n", true, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lines);
    const InitiatorDaemonConfig cfg =
        parse_initiator_config(initiator_with(c.lines, "[orders]\nsource = \"rate\"\nrate = 10\n"), "init.toml");
    ASSERT_EQ(cfg.orders.shapes.size(), 1u);
    EXPECT_EQ(cfg.orders.shapes[0].handl_inst, c.handl_inst);
    EXPECT_EQ(cfg.orders.shapes[0].transact_time, c.transact_time);
  }
  // No source, no check: no dictionary is read.
  EXPECT_TRUE(parse_initiator_config(initiator_with("", ""), "init.toml").orders.shapes.empty());
}

class InitiatorOrderCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/kite-orders-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  // FIX42.xml with `from` replaced by `to` (once), as dir/FIX42.xml.
  void edited_fix42(const std::string& from, const std::string& to) {
    std::string x = read_text(dictionaries() + "/FIX42.xml");
    const std::size_t at = x.find(from);
    ASSERT_NE(at, std::string::npos);
    x.replace(at, from.size(), to);
    std::ofstream(dir + "/FIX42.xml") << x;
  }
  std::string dir;
};

TEST_F(InitiatorOrderCheck, aLineTheDictionaryRefusesIsNamedByLineBeforeAnythingIsSent) {
  // A dictionary whose Side allows buy only: line 3 (a sell) is refused.
  edited_fix42("   <value enum='2' description='SELL' />\n", "");
  std::ofstream(dir + "/orders.csv") << "# side,symbol,quantity,price\nbuy,KITE,100,10.25\nsell,KITE,5,10\n";
  const std::string text = initiator_with("BeginString = \"FIX.4.2\"\nDataDictionary = \"" + dir + "/FIX42.xml\"\n",
                                          "[orders]\nsource = \"file\"\nfile = \"" + dir + "/orders.csv\"\n");
  EXPECT_EQ(error_of_config(text), dir + "/orders.csv:3: FIX.4.2:C1->KITE's dictionary refuses this NewOrderSingle: " +
                                       "Value is incorrect (out of range) for this tag: tag 54 (Side), not one of the "
                                       "field's values; nothing is sent");
  // The same file with buys only loads.
  std::ofstream(dir + "/orders.csv") << "buy,KITE,100,10.25\nbuy,KITE,5,10\n";
  EXPECT_EQ(parse_initiator_config(text, "init.toml").orders.lines.size(), 2u);
}

TEST_F(InitiatorOrderCheck, aRequiredFieldTheSourceCannotFillIsRefusedAtLoad) {
  edited_fix42("<message name='NewOrderSingle' msgtype='D' msgcat='app'>\n",
               "<message name='NewOrderSingle' msgtype='D' msgcat='app'>\n   <field name='Account' required='Y' />\n");
  const std::string text = initiator_with("BeginString = \"FIX.4.2\"\nDataDictionary = \"" + dir + "/FIX42.xml\"\n",
                                          "[orders]\nsource = \"rate\"\nrate = 10\n");
  EXPECT_EQ(error_of_config(text),
            "init.toml: session 1 (FIX.4.2:C1->KITE): its dictionary requires tag 1 (Account) "
            "on NewOrderSingle, which kite-initiator does not fill");
}

}  // namespace
}  // namespace kite::app::test
