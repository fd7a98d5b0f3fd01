#include "messages.hpp"

#include "kite/codec/fix.hpp"

namespace kite::bench {

using codec::MessageWriter;
namespace tag = codec::tag;

namespace {
constexpr std::string_view kAccount = "BENCH-ACCOUNT-001";
}  // namespace

std::size_t write_logon(MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns) {
  w.begin(buf, cap, "A", seq, utc_ns);
  w.add_uint(tag::EncryptMethod, 0);
  w.add_uint(tag::HeartBtInt, kHeartBtInt);
  w.add_bool(tag::ResetSeqNumFlag, true);
  return w.finish();
}

std::size_t write_logout(MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns) {
  w.begin(buf, cap, "5", seq, utc_ns);
  return w.finish();
}

std::size_t write_heartbeat(MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns,
                            std::string_view test_req_id) {
  w.begin(buf, cap, "0", seq, utc_ns);
  if (!test_req_id.empty()) w.add_string(tag::TestReqID, test_req_id);
  return w.finish();
}

std::size_t write_order(MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns,
                        std::uint64_t clordid) {
  char id[13];
  id[0] = 'C';
  for (int i = 12; i >= 1; --i) {
    id[i] = static_cast<char>('0' + clordid % 10);
    clordid /= 10;
  }
  w.begin(buf, cap, "D", seq, utc_ns);
  w.add_string(tag::ClOrdID, {id, sizeof id});
  w.add_char(tag::HandlInst, '1');
  w.add_string(tag::Account, kAccount);
  w.add_string(tag::Symbol, "KITE.XPAR");
  w.add_char(tag::Side, '1');
  w.add_timestamp(tag::TransactTime, utc_ns, codec::TimePrecision::micros);
  w.add_uint(tag::OrderQty, 100);
  w.add_char(tag::OrdType, '2');
  w.add_decimal(tag::Price, codec::Decimal{10125, -2});
  w.add_char(tag::TimeInForce, '0');
  return w.finish();
}

std::size_t write_execution_report(MessageWriter& w, char* buf, std::size_t cap, std::uint64_t seq, std::int64_t utc_ns,
                                   const OrderEcho& o, std::uint64_t order_id, std::uint64_t exec_id) {
  w.begin(buf, cap, "8", seq, utc_ns);
  w.add_uint(tag::OrderID, order_id);
  w.add_string(tag::ClOrdID, o.cl_ord_id);
  w.add_uint(tag::ExecID, exec_id);
  w.add_char(tag::ExecType, '0');
  w.add_char(tag::OrdStatus, '0');
  w.add_string(tag::Symbol, o.symbol);
  w.add_char(tag::Side, o.side);
  w.add_string(tag::OrderQty, o.order_qty);
  w.add_string(tag::Price, o.price);
  w.add_string(tag::LeavesQty, o.order_qty);
  w.add_uint(tag::CumQty, 0);
  w.add_uint(tag::AvgPx, 0);
  w.add_timestamp(tag::TransactTime, utc_ns);
  return w.finish();
}

}  // namespace kite::bench
