// The quickfix flavour: a QuickFIX acceptor (Debian's libquickfix-dev) with
// the ack application's behaviour. Plain C++ interface: no QuickFIX header
// here, so C++20 code can call it; the implementation is built as gnu++14.
#pragma once

#include <atomic>
#include <string>

#include "server.hpp"

namespace kite::bench {

// Serves until stop is set; returns a process exit code. Models: single
// (ThreadedSocketAcceptor, the session's thread named kite-single and
// pinned) and mono (SocketAcceptor, its reactor on one thread named
// kite-mono). QuickFIX's reactor always blocks in poll(): --idle does not
// apply to it.
int run_quickfix_server(const ServerOptions& o, const std::atomic<bool>& stop, std::string& error);

}  // namespace kite::bench
