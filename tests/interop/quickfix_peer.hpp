// The interop test's QuickFIX side behind a plain interface (QuickFIX headers
// need gnu++14 and stay in quickfix_peer.cpp).
#pragma once

#include <memory>
#include <string>

#include "interop_model.hpp"

namespace kite::interop {

class QuickfixPeer {
 public:
  // Loads the FIX44 DataDictionary; throws std::runtime_error on failure.
  explicit QuickfixPeer(const std::string& fix44_xml);
  ~QuickfixPeer();
  QuickfixPeer(const QuickfixPeer&) = delete;
  QuickfixPeer& operator=(const QuickfixPeer&) = delete;

  // Parses with the DataDictionary and validation on. On success fills `out`
  // (values as QuickFIX holds them, BeginString/BodyLength/MsgType/CheckSum
  // left out) and returns true; otherwise `error` says what QuickFIX threw.
  bool parse(const std::string& wire, Message& out, std::string& error) const;

  // Builds a FIX::Message from the tree with typed QuickFIX fields (groups
  // laid out from the DataDictionary) and returns toString().
  std::string build(const Message& m) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kite::interop
