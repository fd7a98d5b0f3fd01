// The initiator side: a session bound to its connection, sending its Logon
// on every connect, against a hostile acceptor written by the fuzzer, with
// random timing, back-pressure and reconnects (tests/fuzz/session_driver.hpp).
#include "session_driver.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kite::fuzz::Driver(true, data, size).run();
  return 0;
}
