// The tls tests' certificates: the bench's (kite/bench/certificates.hpp),
// under the tests' name.
#pragma once

#include "kite/bench/certificates.hpp"

namespace kite::test {
using TestCertificates = kite::bench::Certificates;
}  // namespace kite::test
