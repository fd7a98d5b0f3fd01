// gnu++14, without Kite's warning flags: QuickFIX 1.15.1's headers need both.
#include "quickfix_peer.hpp"

#include <stdexcept>

#include <quickfix/DataDictionary.h>
#include <quickfix/Group.h>
#include <quickfix/Message.h>

namespace kite {
namespace interop {

struct QuickfixPeer::Impl {
  FIX::DataDictionary dictionary;
};

namespace {

void flatten(const FIX::FieldMap& map, Entry& out) {
  for (FIX::FieldMap::const_iterator it = map.begin(); it != map.end(); ++it) {
    const int tag = it->getTag();
    if (tag == FIX::FIELD::BeginString || tag == FIX::FIELD::BodyLength || tag == FIX::FIELD::MsgType ||
        tag == FIX::FIELD::CheckSum)
      continue;
    if (map.hasGroup(tag)) {
      Group g;
      g.count_tag = tag;
      g.declared = it->getString();
      const size_t n = map.groupCount(tag);
      for (size_t i = 1; i <= n; ++i) {
        Entry e;
        flatten(map.getGroupRef(static_cast<int>(i), tag), e);
        g.entries.push_back(e);
      }
      out.groups.push_back(g);
    } else {
      Field f;
      f.tag = tag;
      f.text = it->getString();
      out.fields.push_back(f);
    }
  }
}

void set_typed(FIX::FieldMap& map, const Field& f) {
  switch (f.kind) {
    case Kind::integer: map.setField(FIX::IntField(f.tag, static_cast<int>(f.number))); break;
    case Kind::decimal: {
      // One correctly rounded operation, so the shortest rendering is the decimal meant.
      double scale = 1;
      for (int i = 0; i < (f.exponent < 0 ? -f.exponent : f.exponent); ++i) scale *= 10;
      const double v = f.exponent < 0 ? static_cast<double>(f.number) / scale : static_cast<double>(f.number) * scale;
      map.setField(FIX::DoubleField(f.tag, v));
      break;
    }
    case Kind::character: map.setField(FIX::CharField(f.tag, f.text.empty() ? ' ' : f.text[0])); break;
    case Kind::timestamp: {
      const std::int64_t s = f.number / 1000000000;
      const int ns = static_cast<int>(f.number % 1000000000);
      map.setField(FIX::UtcTimeStampField(f.tag, FIX::UtcTimeStamp(static_cast<time_t>(s), ns, 9), f.precision));
      break;
    }
    case Kind::string:
    default: map.setField(FIX::StringField(f.tag, f.text)); break;
  }
}

void fill(FIX::FieldMap& map, const Entry& e, const std::string& msg_type, const FIX::DataDictionary& dd) {
  for (size_t i = 0; i < e.fields.size(); ++i) set_typed(map, e.fields[i]);
  for (size_t i = 0; i < e.groups.size(); ++i) {
    const Group& g = e.groups[i];
    int delim = 0;
    const FIX::DataDictionary* gdd = 0;
    if (!dd.getGroup(msg_type, g.count_tag, delim, gdd))
      throw std::runtime_error("no group layout for tag " + std::to_string(g.count_tag));
    for (size_t k = 0; k < g.entries.size(); ++k) {
      FIX::Group entry(g.count_tag, delim, gdd->getOrderedFields());
      fill(entry, g.entries[k], msg_type, *gdd);
      map.addGroup(g.count_tag, entry);
    }
  }
}

}  // namespace

QuickfixPeer::QuickfixPeer(const std::string& path) : impl_(new Impl) {
  try {
    impl_->dictionary.readFromURL(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("QuickFIX cannot load " + path + ": " + e.what());
  }
}

QuickfixPeer::~QuickfixPeer() {}

bool QuickfixPeer::parse(const std::string& wire, Message& out, std::string& error) const {
  try {
    FIX::Message m(wire, impl_->dictionary, true);
    impl_->dictionary.validate(m);
    FIX::MsgType type;
    m.getHeader().getField(type);
    out.msg_type = type.getValue();
    flatten(m.getHeader(), out.header);
    flatten(m, out.body);
    return true;
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
}

std::string QuickfixPeer::build(const Message& m) const {
  FIX::Message msg;
  FIX::Header& h = msg.getHeader();
  h.setField(FIX::BeginString("FIX.4.4"));
  h.setField(FIX::MsgType(m.msg_type));
  for (size_t i = 0; i < m.header.fields.size(); ++i) set_typed(h, m.header.fields[i]);
  fill(msg, m.body, m.msg_type, impl_->dictionary);
  return msg.toString();
}

}  // namespace interop
}  // namespace kite
