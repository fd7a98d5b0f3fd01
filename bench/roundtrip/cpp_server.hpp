// The cpp flavour: Kite as a user runs it. kite-acceptor's library
// (app::Acceptor: the engine, the FIX session layer and OrderApplication in
// ack mode, one ExecutionReport New per NewOrderSingle) started from the
// cell's kite-acceptor file: the lab's (--acceptor-config), else one
// rendered from the server's options.
#pragma once

#include <atomic>
#include <string>

#include "kite/bench/acceptor_file.hpp"
#include "server.hpp"

namespace kite::bench {

// The acceptor file (kite/bench/acceptor_file.hpp) of these options, and its
// text: what the server runs when it is given no --acceptor-config.
AcceptorFile acceptor_file_of(const ServerOptions& o);
std::string cpp_server_config(const ServerOptions& o);

// Serves until stop is set; returns a process exit code: 0 after a clean
// stop, 3 for a transport/model pair the engine cannot run (error starts
// with "unsupported:"), 1 for other failures.
int run_cpp_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error);

}  // namespace kite::bench
