// The bytes and values both sides of codec_bench work on. Plain C++14: the
// QuickFIX translation unit includes it too.
#pragma once

#include <cstdint>
#include <string>

namespace kite::bench::samples {

// A FIX.4.4 NewOrderSingle of about 200 bytes, '|' standing for SOH;
// BodyLength and CheckSum are filled by complete_message().
inline const char* new_order_single_body() {
  return "35=D|34=1029|49=CLIENT01|52=20240315-09:30:00.123|56=KITEEXCH|1=ACC-7731|"
         "11=ORD-000000123456|21=1|38=1500|40=2|44=101.2500|54=1|55=MSFT|59=0|"
         "60=20240315-09:30:00.123456|207=XNAS|";
}

inline std::string complete_message(const char* begin_string, const char* body_with_pipes) {
  std::string body(body_with_pipes);
  for (char& c : body)
    if (c == '|') c = '\x01';
  std::string m = std::string("8=") + begin_string + '\x01' + "9=" + std::to_string(body.size()) + '\x01' + body;
  unsigned sum = 0;
  for (const char c : m) sum += static_cast<unsigned char>(c);
  sum &= 0xFF;
  m += "10=";
  m += static_cast<char>('0' + sum / 100);
  m += static_cast<char>('0' + sum / 10 % 10);
  m += static_cast<char>('0' + sum % 10);
  m += '\x01';
  return m;
}

inline std::string new_order_single() { return complete_message("FIX.4.4", new_order_single_body()); }

// A FIX.4.4 message of 4 header fields and body fields up to `fields` in
// all between BeginString/BodyLength and CheckSum, the NewOrderSingle's
// fields over and over: how the index's time grows with the field count.
inline std::string message_of_fields(int fields) {
  static const char* const kFields[] = {"11=ORD-000000123456|",
                                        "38=1500|",
                                        "40=2|",
                                        "44=101.2500|",
                                        "54=1|",
                                        "55=MSFT|",
                                        "59=0|",
                                        "1=ACC-7731|",
                                        "21=1|",
                                        "60=20240315-09:30:00.123456|",
                                        "207=XNAS|",
                                        "58=partial fill|"};
  std::string body = "35=D|34=1029|49=CLIENT01|56=KITEEXCH|";
  for (int i = 4; i < fields; ++i) body += kFields[(i - 4) % 12];
  return complete_message("FIX.4.4", body.c_str());
}

// The ExecutionReport both sides build (about 280 bytes with the header).
struct ExecutionReportValues {
  const char* sender = "KITEEXCH";
  const char* target = "CLIENT01";
  const char* order_id = "KX-0000000042";
  const char* cl_ord_id = "ORD-000000123456";
  const char* exec_id = "KX-E-0000000097";
  char exec_type = 'F';
  char ord_status = '1';
  const char* account = "ACC-7731";
  const char* symbol = "MSFT";
  const char* security_exchange = "XNAS";
  char side = '1';
  std::int64_t order_qty = 1500;
  char ord_type = '2';
  std::int64_t price_ticks = 1012500;  // 101.2500, 4 decimals
  char time_in_force = '0';
  std::int64_t last_qty = 500;
  std::int64_t leaves_qty = 1000;
  std::int64_t cum_qty = 500;
  const char* text = "partial fill";
  // 2024-03-15 09:30:00.123456 UTC
  std::int64_t transact_time_ns = 1710495000123456000;
};

}  // namespace kite::bench::samples
