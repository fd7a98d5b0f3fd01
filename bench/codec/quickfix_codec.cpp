// Compiled as gnu++14 without Kite's warning flags: QuickFIX 1.15.1 headers
// use dynamic exception specifications.
#include "quickfix_codec.hpp"

#include <stdexcept>

#include <quickfix/DataDictionary.h>
#include <quickfix/Message.h>
#include <quickfix/fix44/ExecutionReport.h>

#include "samples.hpp"

namespace kite {
namespace bench {

struct QuickfixCodec::Impl {
  FIX::DataDictionary dictionary;
  std::string out;
  samples::ExecutionReportValues er;
};

namespace {

std::uint64_t read_eight(const FIX::Message& m) {
  FIX::ClOrdID cl;
  FIX::Symbol symbol;
  FIX::Side side;
  FIX::OrderQty qty;
  FIX::OrdType type;
  FIX::Price price;
  FIX::TransactTime time;
  FIX::Account account;
  m.getField(cl);
  m.getField(symbol);
  m.getField(side);
  m.getField(qty);
  m.getField(type);
  m.getField(price);
  m.getField(time);
  m.getField(account);
  const FIX::UtcTimeStamp t = time.getValue();
  return cl.getValue().size() + symbol.getValue().size() + static_cast<std::uint64_t>(side.getValue()) +
         static_cast<std::uint64_t>(qty.getValue()) + static_cast<std::uint64_t>(type.getValue()) +
         static_cast<std::uint64_t>(price.getValue() * 10000.0) + static_cast<std::uint64_t>(t.getFraction(6)) +
         account.getValue().size();
}

}  // namespace

QuickfixCodec::QuickfixCodec(const std::string& path) : impl_(new Impl) {
  try {
    impl_->dictionary.readFromURL(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("QuickFIX cannot load " + path + ": " + e.what());
  }
}

QuickfixCodec::~QuickfixCodec() = default;

std::uint64_t QuickfixCodec::decode(const std::string& msg) {
  try {
    FIX::Message m(msg, false);
    return read_eight(m);
  } catch (const std::exception&) {
    return 0;
  }
}

std::uint64_t QuickfixCodec::validate(const std::string& msg) {
  try {
    FIX::Message m(msg, impl_->dictionary, true);
    impl_->dictionary.validate(m);
    return read_eight(m);
  } catch (const std::exception&) {
    return 0;
  }
}

const std::string& QuickfixCodec::encode(std::uint64_t seq_num) {
  const samples::ExecutionReportValues& v = impl_->er;
  const double px = static_cast<double>(v.price_ticks) / 10000.0;
  FIX44::ExecutionReport er(FIX::OrderID(v.order_id), FIX::ExecID(v.exec_id), FIX::ExecType(v.exec_type),
                            FIX::OrdStatus(v.ord_status), FIX::Side(v.side),
                            FIX::LeavesQty(static_cast<double>(v.leaves_qty)),
                            FIX::CumQty(static_cast<double>(v.cum_qty)), FIX::AvgPx(px));
  FIX::Header& h = er.getHeader();
  h.setField(FIX::SenderCompID(v.sender));
  h.setField(FIX::TargetCompID(v.target));
  h.setField(FIX::MsgSeqNum(static_cast<int>(seq_num)));
  h.setField(FIX::SendingTime(FIX::UtcTimeStamp(), 3));
  er.set(FIX::ClOrdID(v.cl_ord_id));
  er.set(FIX::Account(v.account));
  er.set(FIX::Symbol(v.symbol));
  er.set(FIX::SecurityExchange(v.security_exchange));
  er.set(FIX::OrderQty(static_cast<double>(v.order_qty)));
  er.set(FIX::OrdType(v.ord_type));
  er.set(FIX::Price(px));
  er.set(FIX::TimeInForce(v.time_in_force));
  er.set(FIX::LastQty(static_cast<double>(v.last_qty)));
  er.set(FIX::LastPx(px));
  er.set(FIX::TransactTime(FIX::UtcTimeStamp(), 6));
  er.set(FIX::Text(v.text));
  er.toString(impl_->out);
  return impl_->out;
}

}  // namespace bench
}  // namespace kite
