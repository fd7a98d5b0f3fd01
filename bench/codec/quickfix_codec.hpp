// codec_bench's QuickFIX side behind a plain C++ interface: QuickFIX's
// headers need gnu++14 and stay inside quickfix_codec.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace kite::bench {

class QuickfixCodec {
 public:
  // Loads FIX44.xml into a FIX::DataDictionary; throws std::runtime_error
  // with QuickFIX's message when it cannot.
  explicit QuickfixCodec(const std::string& fix44_xml_path);
  ~QuickfixCodec();
  QuickfixCodec(const QuickfixCodec&) = delete;
  QuickfixCodec& operator=(const QuickfixCodec&) = delete;

  // FIX::Message built from the bytes without validation, then 8 typed
  // getField reads (ClOrdID, Symbol, Side, OrderQty, OrdType, Price,
  // TransactTime, Account). Returns a value folded from the reads, 0 on error.
  std::uint64_t decode(const std::string& msg);
  // The same with the DataDictionary: parsed against it and validated.
  // Returns 0 when QuickFIX rejects the message.
  std::uint64_t validate(const std::string& msg);
  // Builds a FIX44::ExecutionReport (samples::ExecutionReportValues) with
  // header fields and serialises it; the result stays valid until the next call.
  const std::string& encode(std::uint64_t seq_num);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kite::bench
