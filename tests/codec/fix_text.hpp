// Test helpers: FIX messages written readably with '|' for SOH, completed
// with a correct BodyLength and CheckSum. Set-up code only (allocates).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "kite/codec/fix.hpp"
#include "kite/codec/scan.hpp"

namespace kite::codec::testing {

// '|' -> SOH.
inline std::string soh(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == '|') c = kSoh;
  return out;
}

// SOH -> '|', for readable failure messages.
inline std::string pipes(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == kSoh) c = '|';
  return out;
}

// "8=<begin>|9=<len>|<body>10=<sum>|" where body is "35=D|...|" with '|' for SOH.
inline std::string fix_message(std::string_view begin_string, std::string_view body) {
  const std::string b = soh(body);
  std::string m = "8=" + std::string(begin_string) + kSoh + "9=" + std::to_string(b.size()) + kSoh + b;
  const std::uint32_t sum = ScalarScan::checksum(m.data(), m.data() + m.size());
  char tail[8];
  std::snprintf(tail, sizeof tail, "10=%03u", sum);
  m += tail;
  m += kSoh;
  return m;
}

// A ~200-byte FIX.4.4 NewOrderSingle, the benchmarks' and tests' staple.
inline std::string new_order_single_44(std::uint64_t seq = 1) {
  return fix_message("FIX.4.4", "35=D|34=" + std::to_string(seq) +
                                    "|49=CLIENT01|52=20240315-09:30:00.123|56=KITEEXCH|1=ACC-7731|"
                                    "11=ORD-000000123456|21=1|38=1500|40=2|44=101.2500|54=1|55=MSFT|"
                                    "59=0|60=20240315-09:30:00.123456|207=XNAS|");
}

}  // namespace kite::codec::testing
