// The cpp flavour: Kite itself. The engine runtime (acceptor model,
// transport, pinning, idle strategy) with the FIX session layer and the ack
// application (one ExecutionReport New per NewOrderSingle).
#pragma once

#include <atomic>
#include <string>

#include "server.hpp"

namespace kite::bench {

// Serves until stop is set; returns a process exit code: 0 after a clean
// stop, 3 for a transport/model pair the engine cannot run (error starts
// with "unsupported:"), 1 for other failures.
int run_cpp_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error);

}  // namespace kite::bench
