// The messages of bench_roundtrip, shared by the client, the raw server and
// the ack application so that every flavour sends the same bytes:
// a NewOrderSingle of about 200 bytes and an ExecutionReport (New) of about
// 280 bytes. Writers write into a buffer they are handed; nothing allocates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kite/codec/encoder.hpp"

namespace kite::bench {

inline constexpr std::string_view kServerCompID = "KITE";
inline constexpr int kHeartBtInt = 30;
inline constexpr std::string_view kAccount = "BENCH-ACCOUNT-001";

// "BENCH<k>": the SenderCompID of client session k.
inline std::string client_comp_id(unsigned k) { return "BENCH" + std::to_string(k); }

// Logon (35=A) with EncryptMethod=0, HeartBtInt=30, ResetSeqNumFlag=Y.
std::size_t write_logon(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns);
std::size_t write_logout(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns);
std::size_t write_heartbeat(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq,
                            std::int64_t utc_ns, std::string_view test_req_id);

// NewOrderSingle: ClOrdID "C" + 12 digits of clordid, Symbol, Side=1,
// OrderQty=100, OrdType=2, Price=101.25, TransactTime, HandlInst=1, Account.
std::size_t write_order(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns,
                        std::uint64_t clordid);

// The fields of an order the ack application echoes.
struct OrderEcho {
  std::string_view cl_ord_id, symbol, account;
  char side = '1';
  std::string_view order_qty, price;
};

// The body of an ExecutionReport ExecType=0 (New), OrdStatus=0, echoing the
// order (after the header the writer has begun).
void add_execution_report_body(codec::MessageWriter& w, std::int64_t utc_ns, const OrderEcho& o,
                               std::uint64_t order_id, std::uint64_t exec_id) noexcept;
// The whole ExecutionReport.
std::size_t write_execution_report(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq,
                                   std::int64_t utc_ns, const OrderEcho& o, std::uint64_t order_id,
                                   std::uint64_t exec_id);

}  // namespace kite::bench
