// The cpp flavour: Kite as a user runs it. kite-acceptor's library
// (app::Acceptor: the engine, the FIX session layer and OrderApplication in
// ack mode, one ExecutionReport New per NewOrderSingle) started from a
// kite-acceptor configuration file made from the server's options.
#pragma once

#include <atomic>
#include <string>

#include "server.hpp"

namespace kite::bench {

// The kite-acceptor TOML file (docs/acceptor.md) that the cpp flavour runs
// for these options: one FIX.4.4 session KITE -> BENCH<k> per client session.
std::string cpp_server_config(const ServerOptions& o);

// Serves until stop is set; returns a process exit code: 0 after a clean
// stop, 3 for a transport/model pair the engine cannot run (error starts
// with "unsupported:"), 1 for other failures.
int run_cpp_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error);

}  // namespace kite::bench
