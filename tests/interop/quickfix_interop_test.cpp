// Agreement with an independent parser: generated FIX.4.4 messages of several
// types, with groups (nested where FIX.4.4 has them), go Kite -> QuickFIX
// (DataDictionary validation on) and QuickFIX -> Kite (frame, index, header,
// Kite's validator, typed reads), and both sides must see the same fields.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "interop_model.hpp"
#include "kite/codec/codec.hpp"
#include "kite/codec/dictionary.hpp"
#include "kite/codec/group.hpp"
#include "kite/codec/validator.hpp"
#include "kite/util/dictionary_dir.hpp"
#include "quickfix_peer.hpp"

namespace kite::interop {
namespace {

using namespace kite::codec;

std::string dictionary_dir() { return util::dictionary_dir(); }

std::string printable(std::string s) {
  for (char& c : s)
    if (c == kSoh) c = '|';
  return s;
}

// --- generation ---------------------------------------------------------------

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  Field str(int tag, std::string text) { return {tag, Kind::string, std::move(text), 0, 0, 3}; }
  Field chr(int tag, char c) { return {tag, Kind::character, std::string(1, c), 0, 0, 3}; }
  Field integer(int tag, std::int64_t v) {
    char buf[kMaxIntChars];
    return {tag, Kind::integer, std::string(buf, write_int(buf, v)), v, 0, 3};
  }
  Field decimal(int tag, std::int64_t m, int e) {
    char buf[kMaxDecimalChars];
    return {tag, Kind::decimal, std::string(buf, write_decimal(buf, {m, e})), m, e, 3};
  }
  Field timestamp(int tag, std::int64_t ns, int precision) {
    std::int64_t unit = 1;
    for (int i = precision; i < 9; ++i) unit *= 10;
    ns -= ns % unit;
    char buf[kMaxTimestampChars];
    const auto p = static_cast<TimePrecision>(precision);
    return {tag, Kind::timestamp, std::string(buf, write_utc_timestamp(buf, ns, p)), ns, 0, precision};
  }

  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  bool coin() { return below(2) == 0; }
  template <class T>
  T pick(std::initializer_list<T> xs) {
    return xs.begin()[below(xs.size())];
  }
  std::string id(std::size_t min_len = 1, std::size_t max_len = 20) {
    static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-./:#";
    std::string s(min_len + below(max_len - min_len + 1), 'x');
    for (char& c : s) c = kChars[below(sizeof kChars - 1)];
    return s;
  }
  Field price(int tag) {
    const int e = pick({0, -1, -2, -4, -6});
    const auto m = static_cast<std::int64_t>(1 + below(999'999'999)) * (below(10) == 0 ? -1 : 1);
    return decimal(tag, m, e);
  }
  Field qty(int tag) { return decimal(tag, static_cast<std::int64_t>(1 + below(9'999'999)), pick({0, 0, 0, -2})); }
  Field time(int tag) {
    const auto ns = static_cast<std::int64_t>(946'684'800'000'000'000ull + below(4'000'000'000ull) * 1'000'000'000ull +
                                              below(1'000'000'000));
    return timestamp(tag, ns, pick({0, 3, 6, 9}));
  }

  Group parties() {
    Group g{tag::NoPartyIDs, "", {}};
    const std::size_t n = 1 + below(3);
    for (std::size_t i = 0; i < n; ++i) {
      Entry e;
      e.fields.push_back(str(tag::PartyID, id()));
      if (coin()) e.fields.push_back(chr(tag::PartyIDSource, pick({'B', 'C', 'D', 'G', '1', '5'})));
      if (coin()) e.fields.push_back(integer(tag::PartyRole, pick<std::int64_t>({1, 3, 4, 11, 12, 13, 24, 30})));
      if (coin()) {  // PtysSubGrp: a group inside a group
        Group sub{802, "", {}};
        const std::size_t k = 1 + below(2);
        for (std::size_t j = 0; j < k; ++j) {
          Entry s;
          s.fields.push_back(str(523, id()));
          if (coin()) s.fields.push_back(integer(803, static_cast<std::int64_t>(1 + below(26))));
          sub.entries.push_back(s);
        }
        e.groups.push_back(sub);
      }
      g.entries.push_back(e);
    }
    return g;
  }

  Message next(int type, std::uint64_t seq) {
    Message m;
    m.header.fields = {str(tag::SenderCompID, "KITE"), str(tag::TargetCompID, "PEER"),
                       integer(tag::MsgSeqNum, static_cast<std::int64_t>(seq)), time(tag::SendingTime)};
    m.header.fields.back() = timestamp(tag::SendingTime, m.header.fields.back().number, 3);
    auto& b = m.body.fields;
    switch (type) {
      case 0:    // NewOrderSingle
      case 5: {  // NewOrderSingle with parties
        m.msg_type = "D";
        b.push_back(str(tag::ClOrdID, id()));
        if (coin()) b.push_back(str(tag::Account, id(1, 12)));
        b.push_back(chr(tag::HandlInst, pick({'1', '2', '3'})));
        b.push_back(str(tag::Symbol, id(1, 8)));
        b.push_back(chr(tag::Side, pick({'1', '2', '5'})));
        b.push_back(time(tag::TransactTime));
        b.push_back(qty(tag::OrderQty));
        const char type_c = pick({'1', '2'});
        b.push_back(chr(tag::OrdType, type_c));
        if (type_c == '2') b.push_back(price(tag::Price));
        if (coin()) b.push_back(chr(tag::TimeInForce, pick({'0', '1', '3'})));
        if (coin()) b.push_back(str(tag::Text, id(1, 40)));
        if (type == 5) m.body.groups.push_back(parties());
        break;
      }
      case 1: {  // ExecutionReport
        m.msg_type = "8";
        b.push_back(str(tag::OrderID, id()));
        b.push_back(str(tag::ExecID, id()));
        b.push_back(chr(tag::ExecType, pick({'0', 'F', '4', '5'})));
        b.push_back(chr(tag::OrdStatus, pick({'0', '1', '2', '4'})));
        b.push_back(str(tag::Symbol, id(1, 8)));
        b.push_back(chr(tag::Side, pick({'1', '2'})));
        b.push_back(qty(tag::LeavesQty));
        b.push_back(qty(tag::CumQty));
        b.push_back(price(tag::AvgPx));
        if (coin()) b.push_back(str(tag::ClOrdID, id()));
        if (coin()) b.push_back(qty(tag::OrderQty));
        if (coin()) b.push_back(qty(tag::LastQty));
        if (coin()) b.push_back(price(tag::LastPx));
        if (coin()) b.push_back(time(tag::TransactTime));
        if (coin()) b.push_back(str(tag::Text, id(1, 40)));
        if (coin()) m.body.groups.push_back(parties());
        break;
      }
      case 2:  // OrderCancelRequest
        m.msg_type = "F";
        b.push_back(str(tag::OrigClOrdID, id()));
        b.push_back(str(tag::ClOrdID, id()));
        b.push_back(str(tag::Symbol, id(1, 8)));
        b.push_back(chr(tag::Side, pick({'1', '2'})));
        b.push_back(time(tag::TransactTime));
        if (coin()) b.push_back(qty(tag::OrderQty));
        break;
      case 3:  // OrderCancelReplaceRequest
        m.msg_type = "G";
        b.push_back(str(tag::OrigClOrdID, id()));
        b.push_back(str(tag::ClOrdID, id()));
        b.push_back(str(tag::Symbol, id(1, 8)));
        b.push_back(chr(tag::Side, pick({'1', '2'})));
        b.push_back(time(tag::TransactTime));
        b.push_back(qty(tag::OrderQty));
        b.push_back(chr(tag::OrdType, '2'));
        b.push_back(price(tag::Price));
        break;
      default: {  // MarketDataSnapshotFullRefresh
        m.msg_type = "W";
        if (coin()) b.push_back(str(262, id()));  // MDReqID
        b.push_back(str(tag::Symbol, id(1, 8)));
        Group g{268, "", {}};
        const std::size_t n = 1 + below(6);
        for (std::size_t i = 0; i < n; ++i) {
          Entry e;
          e.fields.push_back(chr(269, pick({'0', '1', '2'})));
          if (coin()) e.fields.push_back(price(270));
          if (coin()) e.fields.push_back(str(tag::Currency, pick<const char*>({"USD", "EUR", "JPY"})));
          if (coin()) e.fields.push_back(qty(271));
          if (coin()) e.fields.push_back(integer(290, static_cast<std::int64_t>(1 + below(20))));
          if (coin()) e.fields.push_back(str(tag::Text, id(1, 30)));
          g.entries.push_back(e);
        }
        m.body.groups.push_back(g);
        break;
      }
    }
    return m;
  }

 private:
  std::mt19937_64 rng_;
};

// --- Kite's side ----------------------------------------------------------------

void emit(MessageWriter& w, const Entry& e) {
  for (const Field& f : e.fields) {
    const auto t = static_cast<std::uint32_t>(f.tag);
    switch (f.kind) {
      case Kind::string: w.add_string(t, f.text); break;
      case Kind::character: w.add_char(t, f.text[0]); break;
      case Kind::integer: w.add_int(t, f.number); break;
      case Kind::decimal: w.add_decimal(t, {f.number, f.exponent}); break;
      case Kind::timestamp: w.add_timestamp(t, f.number, static_cast<TimePrecision>(f.precision)); break;
    }
  }
  for (const Group& g : e.groups) {
    w.add_uint(static_cast<std::uint32_t>(g.count_tag), g.entries.size());
    for (const Entry& x : g.entries) emit(w, x);
  }
}

std::string kite_encode(const HeaderTemplate& h, const Message& m) {
  MessageWriter w(h, TimePrecision::millis);
  std::string buf(8192, '\0');
  w.begin(buf.data(), buf.size(), m.msg_type, static_cast<std::uint64_t>(m.header.fields[2].number),
          m.header.fields[3].number);
  emit(w, m.body);
  const std::size_t n = w.finish();
  buf.resize(n);
  return buf;
}

void walk_entry(const FieldIndex& ix, const GroupEntry& e, Entry& out);

Group read_group(const FieldIndex& ix, const GroupView& view) {
  Group g;
  g.count_tag = static_cast<int>(ix[view.count_pos()].tag);
  g.declared = std::string(ix.value_at(view.count_pos()));
  for (const GroupEntry e : view) {
    Entry x;
    walk_entry(ix, e, x);
    g.entries.push_back(x);
  }
  return g;
}

void walk_entry(const FieldIndex& ix, const GroupEntry& e, Entry& out) {
  std::uint32_t j = e.begin();
  while (j < e.end()) {
    const FieldRef& f = ix[j];
    if (const GroupDef* nested = e.def().group(f.tag)) {
      const GroupView v(ix, j, *nested);
      out.groups.push_back(read_group(ix, v));
      j = v.end_pos();
    } else {
      out.fields.push_back({static_cast<int>(f.tag), Kind::string, std::string(ix.value(f)), 0, 0, 3});
      ++j;
    }
  }
}

// Kite's view of a frame: header and body trees from the index and the
// dictionary's group layouts.
bool kite_decode(const std::string& wire, const Dictionary& dict, Validator& validator, Message& out,
                 std::string& error) {
  const FrameResult fr = frame(wire);
  if (fr.status != FrameStatus::complete || fr.size != wire.size()) {
    error = std::string("frame: ") + to_string(fr.error);
    return false;
  }
  FieldIndex ix;
  if (const IndexResult r = ix.build(wire); !r) {
    error = std::string("index: ") + to_string(r.error);
    return false;
  }
  Header h;
  if (const HeaderResult r = read_header(ix, h); !r) {
    error = std::string("header: ") + to_string(r.error);
    return false;
  }
  if (const ValidationResult r = validator.validate(ix, h); !r) {
    error = std::string("Kite validator: ") + r.text;
    return false;
  }
  out.msg_type = std::string(h.msg_type);
  std::uint32_t i = 3;
  while (i < ix.size() && ix[i].tag != tag::CheckSum) {
    const FieldRef& f = ix[i];
    if (const GroupDef* g = dict.group(h.msg_type, f.tag)) {
      const GroupView v(ix, i, *g);
      out.body.groups.push_back(read_group(ix, v));
      i = v.end_pos();
      continue;
    }
    Entry& target = dict.header().contains(f.tag) ? out.header : out.body;
    target.fields.push_back({static_cast<int>(f.tag), Kind::string, std::string(ix.value(f)), 0, 0, 3});
    ++i;
  }
  return true;
}

// --- comparison -------------------------------------------------------------------

// `seen` holds values as text; `want` knows each value's type. With
// exact_text, the text must be Kite's rendering byte for byte.
void expect_same(const Entry& want, const Entry& seen, bool exact_text, const std::string& where) {
  ASSERT_EQ(seen.fields.size(), want.fields.size()) << where << ": number of fields";
  for (const Field& w : want.fields) {
    const Field* s = nullptr;
    for (const Field& x : seen.fields) {
      if (x.tag == w.tag) {
        ASSERT_EQ(s, nullptr) << where << ": tag " << w.tag << " twice";
        s = &x;
      }
    }
    ASSERT_NE(s, nullptr) << where << ": tag " << w.tag << " missing";
    const std::string at = where + " tag " + std::to_string(w.tag) + " '" + s->text + "' vs '" + w.text + "'";
    if (exact_text) {
      EXPECT_EQ(s->text, w.text) << at;
    }
    switch (w.kind) {
      case Kind::string:
      case Kind::character: EXPECT_EQ(s->text, w.text) << at; break;
      case Kind::integer: {
        std::int64_t v = 0;
        ASSERT_TRUE(parse_int(s->text, v)) << at;
        EXPECT_EQ(v, w.number) << at;
        break;
      }
      case Kind::decimal: {
        Decimal d;
        ASSERT_TRUE(parse_decimal(s->text, d)) << at;
        EXPECT_EQ(d, (Decimal{w.number, w.exponent})) << at;
        break;
      }
      case Kind::timestamp: {
        std::int64_t ns = 0;
        ASSERT_TRUE(parse_utc_timestamp(s->text, ns)) << at;
        EXPECT_EQ(ns, w.number) << at;
        break;
      }
    }
  }
  ASSERT_EQ(seen.groups.size(), want.groups.size()) << where << ": number of groups";
  for (std::size_t g = 0; g < want.groups.size(); ++g) {
    const Group& a = want.groups[g];
    const Group& b = seen.groups[g];
    ASSERT_EQ(b.count_tag, a.count_tag) << where;
    EXPECT_EQ(b.declared, std::to_string(a.entries.size())) << where << " group " << a.count_tag;
    ASSERT_EQ(b.entries.size(), a.entries.size()) << where << " group " << a.count_tag;
    for (std::size_t k = 0; k < a.entries.size(); ++k)
      expect_same(a.entries[k], b.entries[k], exact_text,
                  where + " group " + std::to_string(a.count_tag) + "[" + std::to_string(k) + "]");
  }
}

class QuickfixInteropTest : public ::testing::Test {
 protected:
  static constexpr int kTypes = 6;
  static constexpr int kPerType = 200;

  void SetUp() override {
    const std::string path = dictionary_dir() + "/FIX44.xml";
    peer_ = std::make_unique<QuickfixPeer>(path);
    DictionaryLoad load = Dictionary::load(path);
    ASSERT_TRUE(load) << load.error;
    dict_ = load.dictionary;
    validator_ = std::make_unique<Validator>(*dict_);
  }

  std::unique_ptr<QuickfixPeer> peer_;
  std::shared_ptr<const Dictionary> dict_;
  std::unique_ptr<Validator> validator_;
};

TEST_F(QuickfixInteropTest, kiteEncodedMessagesParseInQuickfixWithValidationFieldByField) {
  Generator gen(20240315);
  const HeaderTemplate h({"FIX.4.4", "KITE", "PEER", "", "", "", ""});
  int checked = 0;
  for (int i = 0; i < kTypes * kPerType; ++i) {
    const Message m = gen.next(i % kTypes, static_cast<std::uint64_t>(i + 1));
    const std::string wire = kite_encode(h, m);
    ASSERT_FALSE(wire.empty());
    Message seen;
    std::string error;
    ASSERT_TRUE(peer_->parse(wire, seen, error)) << "QuickFIX rejected: " << error << "\n" << printable(wire);
    EXPECT_EQ(seen.msg_type, m.msg_type);
    const std::string where = "message " + std::to_string(i) + " " + printable(wire);
    expect_same(m.header, seen.header, true, where + " header");
    expect_same(m.body, seen.body, true, where + " body");
    if (::testing::Test::HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_EQ(checked, kTypes * kPerType);
}

TEST_F(QuickfixInteropTest, quickfixBuiltMessagesDecodeInKiteFieldByField) {
  Generator gen(20240316);
  int checked = 0;
  for (int i = 0; i < kTypes * kPerType; ++i) {
    const Message m = gen.next(i % kTypes, static_cast<std::uint64_t>(i + 1));
    const std::string wire = peer_->build(m);
    Message seen;
    std::string error;
    ASSERT_TRUE(kite_decode(wire, *dict_, *validator_, seen, error)) << error << "\n" << printable(wire);
    EXPECT_EQ(seen.msg_type, m.msg_type);
    const std::string where = "message " + std::to_string(i) + " " + printable(wire);
    expect_same(m.header, seen.header, false, where + " header");
    expect_same(m.body, seen.body, false, where + " body");
    if (::testing::Test::HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_EQ(checked, kTypes * kPerType);
}

TEST_F(QuickfixInteropTest, kiteDecodesWhatKiteEncodesIdentically) {
  Generator gen(20240317);
  const HeaderTemplate h({"FIX.4.4", "KITE", "PEER", "", "", "", ""});
  for (int i = 0; i < kTypes * 50; ++i) {
    const Message m = gen.next(i % kTypes, static_cast<std::uint64_t>(i + 1));
    const std::string wire = kite_encode(h, m);
    Message seen;
    std::string error;
    ASSERT_TRUE(kite_decode(wire, *dict_, *validator_, seen, error)) << error << "\n" << printable(wire);
    expect_same(m.header, seen.header, true, "header " + printable(wire));
    expect_same(m.body, seen.body, true, "body " + printable(wire));
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace kite::interop
