// The acceptor's session over its link connection driven by random timing
// as well as random frames (tests/fuzz/session_driver.hpp).
#include "session_driver.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kite::fuzz::Driver(false, data, size).run();
  return 0;
}
