// One reader per table: the same [engine] text is accepted or refused, with
// the same message, by kite-acceptor's loader and libkite's acceptor, by
// kite-initiator's loader and libkite's initiator, and (for the keys both
// engines take) by the acceptor's loaders and the initiator's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kite/app/acceptor.hpp"
#include "kite/app/initiator_daemon.hpp"
#include "kite/kite.h"
#include "kite/transport/transport.hpp"

namespace {

const char* kName = "engine.toml";

// Sessions that start without a peer's help: the acceptor's listen on
// [engine] port 0; the initiator's connect to a closed port (KITE_ERROR_START).
const char* kAcceptorSessions =
    "[defaults]\nSenderCompID = \"KITE\"\nStoreKind = \"memory\"\nUseDataDictionary = false\n"
    "[[session]]\nTargetCompID = \"C1\"\n";
const char* kInitiatorSessions =
    "[defaults]\nConnectionType = \"initiator\"\nSenderCompID = \"C1\"\nTargetCompID = \"KITE\"\n"
    "StoreKind = \"memory\"\nUseDataDictionary = false\nSocketConnectHost = \"127.0.0.1\"\n"
    "SocketConnectPort = 1\n[[session]]\n";

// The case's line is line 2 of both files.
std::string acceptor_file(const std::string& line) { return "[engine]\n" + line + "\nport = 0\n" + kAcceptorSessions; }
std::string initiator_file(const std::string& line) { return "[engine]\n" + line + "\n" + kInitiatorSessions; }

// What a loader said: "" when it took the file.
template <class Load>
std::string loader_error(Load load) {
  try {
    load();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

struct Outcome {
  kite_status status;
  std::string error;  // kite_last_error() on failure
};

Outcome acceptor_start(const std::string& text) {
  kite_acceptor* a = nullptr;
  const kite_status st = kite_acceptor_start_string(text.c_str(), kName, nullptr, &a);
  Outcome o{st, st == KITE_OK ? "" : kite_last_error()};
  kite_acceptor_free(a);
  return o;
}

Outcome initiator_start(const std::string& text) {
  kite_initiator* in = nullptr;
  const kite_status st = kite_initiator_start_string(text.c_str(), kName, nullptr, &in);
  Outcome o{st, st == KITE_OK ? "" : kite_last_error()};
  kite_initiator_free(in);
  return o;
}

// libkite agrees with the daemon's loader: a refusal is KITE_ERROR_CONFIG
// with the loader's message; a file the loader takes is not a configuration
// error (the initiator's start then fails to connect: KITE_ERROR_START).
void expect_same(const std::string& loader, const Outcome& lib) {
  if (loader.empty()) {
    EXPECT_NE(lib.status, KITE_ERROR_CONFIG) << lib.error;
    EXPECT_NE(lib.status, KITE_ERROR_UNSUPPORTED) << lib.error;
  } else {
    EXPECT_EQ(lib.status, KITE_ERROR_CONFIG) << lib.error;
    EXPECT_EQ(lib.error, loader);
  }
}

// Keys both engines take, good and bad values, and refused keys.
const std::vector<std::string> kShared = {
    "idle = \"block\"",
    "idle = \"spin\"",
    "idle = 1",
    "cores = []",
    "cores = 3",
    "cores = [0, \"a\"]",
    "cores = [5000]",
    "send_buffer = 65536",
    "send_buffer = 10",
    "recv_buffer = \"x\"",
    "recv_buffer = 8192",
    "transport = \"pigeon\"",
    "transport = \"kernel\"",
    "transport = 3",
};

TEST(EngineTable, libkitesAcceptorReadsItAsKiteAcceptorDoes) {
  std::vector<std::string> lines = kShared;
  for (const char* l : {"model = \"single\"", "model = \"triple\"", "bind = 3", "workers = 0", "quickack = 1",
                        "threads = 2", "bogus = 1", "max_connections = 0"})
    lines.push_back(l);
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    const std::string text = acceptor_file(line);
    expect_same(loader_error([&] { kite::app::parse_acceptor_config(text, kName); }), acceptor_start(text));
  }
}

TEST(EngineTable, libkitesInitiatorReadsItAsKiteInitiatorDoes) {
  std::vector<std::string> lines = kShared;
  for (const char* l : {"threads = 2", "threads = 0", "connect_timeout_ms = 500", "connect_timeout_ms = 0",
                        "model = \"mono\"", "port = 1", "bogus = 1"})
    lines.push_back(l);
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    const std::string text = initiator_file(line);
    expect_same(loader_error([&] { kite::app::parse_initiator_config(text, kName); }), initiator_start(text));
  }
}

TEST(EngineTable, keysBothEnginesTakeReadTheSameInEveryLoader) {
  for (const std::string& line : kShared) {
    SCOPED_TRACE(line);
    const std::string acceptor = loader_error([&] { kite::app::parse_acceptor_config(acceptor_file(line), kName); });
    const std::string initiator = loader_error([&] { kite::app::parse_initiator_config(initiator_file(line), kName); });
    EXPECT_EQ(acceptor, initiator);
  }
}

TEST(EngineTable, anUnknownKeyIsRefusedByAllFourNamingFileTableAndKey) {
  const std::string prefix = "engine.toml: [engine]: setting bogus: unknown setting (expected one of: ";
  const std::string acceptor =
      loader_error([] { kite::app::parse_acceptor_config(acceptor_file("bogus = 1"), kName); });
  const std::string initiator =
      loader_error([] { kite::app::parse_initiator_config(initiator_file("bogus = 1"), kName); });
  EXPECT_EQ(acceptor.rfind(prefix, 0), 0u) << acceptor;
  EXPECT_EQ(initiator,
            prefix + "transport, threads, cores, idle, connect_timeout_ms, send_buffer, recv_buffer) (line 2)");
  EXPECT_EQ(acceptor_start(acceptor_file("bogus = 1")).error, acceptor);
  EXPECT_EQ(initiator_start(initiator_file("bogus = 1")).error, initiator);
}

TEST(EngineTable, anEngineThatIsNotATableIsRefusedByAllFour) {
  const std::string want = "engine.toml: [engine]: must be a table (line 1)";
  EXPECT_EQ(acceptor_start(std::string("engine = 3\n") + kAcceptorSessions).error, want);
  EXPECT_EQ(initiator_start(std::string("engine = 3\n") + kInitiatorSessions).error, want);
  EXPECT_EQ(
      loader_error([] { kite::app::parse_acceptor_config(std::string("engine = 3\n") + kAcceptorSessions, kName); }),
      want);
  EXPECT_EQ(
      loader_error([] { kite::app::parse_initiator_config(std::string("engine = 3\n") + kInitiatorSessions, kName); }),
      want);
}

TEST(EngineTable, kiteInitiatorsOwnTablesAreUnknownToLibkite) {
  const std::string text = std::string("[orders]\nsource = \"none\"\n") + kInitiatorSessions;
  EXPECT_EQ(loader_error([&] { kite::app::parse_initiator_config(text, kName); }), "");
  const Outcome o = initiator_start(text);
  EXPECT_EQ(o.status, KITE_ERROR_CONFIG);
  EXPECT_EQ(o.error, "engine.toml: [orders]: unknown table");
}

TEST(EngineTable, aTransportNotBuiltInIsUnsupportedForBothWithTheLoadersMessage) {
  if (kite::transport::compiled_in(kite::transport::Kind::tcpdirect)) GTEST_SKIP() << "tcpdirect is built in";
  const std::string want =
      "engine.toml: [engine]: setting transport: transport tcpdirect is not in this build (line 2)";
  const std::string line = "transport = \"tcpdirect\"";
  EXPECT_EQ(loader_error([&] { kite::app::parse_acceptor_config(acceptor_file(line), kName); }), want);
  EXPECT_EQ(loader_error([&] { kite::app::parse_initiator_config(initiator_file(line), kName); }), want);
  const Outcome a = acceptor_start(acceptor_file(line));
  EXPECT_EQ(a.status, KITE_ERROR_UNSUPPORTED);
  EXPECT_EQ(a.error, "unsupported: " + want);
  const Outcome i = initiator_start(initiator_file(line));
  EXPECT_EQ(i.status, KITE_ERROR_UNSUPPORTED);
  EXPECT_EQ(i.error, "unsupported: " + want);
}

}  // namespace
