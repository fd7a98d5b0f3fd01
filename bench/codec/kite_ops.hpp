// Kite's side of codec_bench, shared with codec_ops (instruction counts):
// the decode of the NewOrderSingle (frame, framed index, 8 typed reads) and
// the ExecutionReport the encode case writes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kite/codec/codec.hpp"
#include "samples.hpp"

namespace kite::bench {

// Frame and index (one frame_and_build, as the session's receive path) and
// the 8 typed reads; returns a fold of them, 0 on error.
struct KiteDecoder {
  codec::FieldIndex ix{256};
  std::uint64_t decode(const char* p, std::size_t n) noexcept {
    const codec::FramedIndex r = ix.frame_and_build<codec::FastScan>(p, n);
    if (r.frame.status != codec::FrameStatus::complete || !r.index) return 0;
    return read_eight();
  }
  std::uint64_t read_eight() const noexcept {
    using namespace codec;
    std::string_view cl, symbol, account;
    char side = 0, type = 0;
    Decimal qty, price;
    std::int64_t t = 0;
    const bool ok = ix.get(tag::ClOrdID, cl) == Get::ok && ix.get(tag::Symbol, symbol) == Get::ok &&
                    ix.get(tag::Side, side) == Get::ok && ix.get(tag::OrderQty, qty) == Get::ok &&
                    ix.get(tag::OrdType, type) == Get::ok && ix.get(tag::Price, price) == Get::ok &&
                    ix.get_timestamp(tag::TransactTime, t) == Get::ok && ix.get(tag::Account, account) == Get::ok;
    if (!ok) return 0;
    return cl.size() + symbol.size() + static_cast<std::uint64_t>(side) + static_cast<std::uint64_t>(qty.mantissa) +
           static_cast<std::uint64_t>(type) + static_cast<std::uint64_t>(price.mantissa) +
           static_cast<std::uint64_t>(t) + account.size();
  }
};

// The ExecutionReport of encode/kite into buf; its size, 0 when it does not fit.
inline std::size_t write_execution_report(codec::MessageWriter& w, char* buf, std::size_t capacity, std::uint64_t seq,
                                          std::int64_t now) noexcept {
  using namespace codec;
  const samples::ExecutionReportValues v;
  const Decimal px{v.price_ticks, -4};
  w.begin(buf, capacity, "8", seq, now);
  w.add_string(tag::OrderID, v.order_id);
  w.add_string(tag::ExecID, v.exec_id);
  w.add_char(tag::ExecType, v.exec_type);
  w.add_char(tag::OrdStatus, v.ord_status);
  w.add_char(tag::Side, v.side);
  w.add_int(tag::LeavesQty, v.leaves_qty);
  w.add_int(tag::CumQty, v.cum_qty);
  w.add_decimal(tag::AvgPx, px);
  w.add_string(tag::ClOrdID, v.cl_ord_id);
  w.add_string(tag::Account, v.account);
  w.add_string(tag::Symbol, v.symbol);
  w.add_string(207, v.security_exchange);  // SecurityExchange
  w.add_int(tag::OrderQty, v.order_qty);
  w.add_char(tag::OrdType, v.ord_type);
  w.add_decimal(tag::Price, px);
  w.add_char(tag::TimeInForce, v.time_in_force);
  w.add_int(tag::LastQty, v.last_qty);
  w.add_decimal(tag::LastPx, px);
  w.add_timestamp(tag::TransactTime, now, TimePrecision::micros);
  w.add_string(tag::Text, v.text);
  return w.finish();
}

}  // namespace kite::bench
