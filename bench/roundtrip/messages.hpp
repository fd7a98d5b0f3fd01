// The messages of bench_roundtrip, shared by the client and the raw server so
// that every flavour moves the same bytes: a NewOrderSingle of about 195
// bytes and an ExecutionReport (New) of about 220 bytes, as the cpp flavour
// (kite-acceptor in ack mode) answers it. Writers write into a buffer they
// are handed; nothing allocates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kite/bench/acceptor_file.hpp"  // kServerCompID, client_comp_id
#include "kite/codec/encoder.hpp"

namespace kite::bench {

inline constexpr int kHeartBtInt = 30;

// Logon (35=A) with EncryptMethod=0, HeartBtInt=30, ResetSeqNumFlag=Y.
std::size_t write_logon(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns);
std::size_t write_logout(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns);
std::size_t write_heartbeat(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns,
                            std::string_view test_req_id);

// NewOrderSingle: ClOrdID "C" + 12 digits of clordid, Symbol, Side=1,
// OrderQty=100, OrdType=2, Price=101.25, TransactTime, HandlInst=1, Account.
std::size_t write_order(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns,
                        std::uint64_t clordid);

// The fields of an order an ExecutionReport echoes.
struct OrderEcho {
  std::string_view cl_ord_id, symbol;
  char side = '1';
  std::string_view order_qty, price;
};

// An ExecutionReport ExecType=0 (New), OrdStatus=0, echoing the order: the
// fields, in the order, that kite-acceptor's ack mode (app::OrderApplication)
// sends, so that the raw flavour moves the cpp flavour's bytes. TransactTime
// takes the writer's precision, as the session's does.
std::size_t write_execution_report(codec::MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq,
                                   std::int64_t utc_ns, const OrderEcho& o, std::uint64_t order_id,
                                   std::uint64_t exec_id);

}  // namespace kite::bench
