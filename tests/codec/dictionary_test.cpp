// The dictionary loader: the standard files load, components flatten,
// groups nest, lookups answer, and broken files are named with their fault.
#include "kite/codec/dictionary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kite/codec/data_pairs.hpp"
#include "kite/codec/fix.hpp"
#include "kite/util/dictionary_dir.hpp"

namespace kite::codec {
namespace {

std::string dict_dir() { return util::dictionary_dir(); }

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/kite_dict_" + name;
  std::ofstream(path) << text;
  return path;
}

// A minimal valid dictionary with `extra_fields` and `extra_messages` spliced in.
std::string tiny_xml(const std::string& extra_fields = "", const std::string& extra_messages = "") {
  return "<fix type='FIX' major='4' minor='4' servicepack='0'>"
         "<header><field name='BeginString' required='Y'/><field name='BodyLength' required='Y'/>"
         "<field name='MsgType' required='Y'/></header>"
         "<trailer><field name='CheckSum' required='Y'/></trailer>"
         "<messages><message name='Heartbeat' msgtype='0' msgcat='admin'/>" +
         extra_messages +
         "</messages><components/>"
         "<fields><field number='8' name='BeginString' type='STRING'/>"
         "<field number='9' name='BodyLength' type='LENGTH'/>"
         "<field number='35' name='MsgType' type='STRING'/>"
         "<field number='10' name='CheckSum' type='STRING'/>" +
         extra_fields + "</fields></fix>";
}

class StandardDictionaries : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fix42_ = Dictionary::load(dict_dir() + "/FIX42.xml");
    fix44_ = Dictionary::load(dict_dir() + "/FIX44.xml");
    fixt_ = Dictionary::load(dict_dir() + "/FIXT11.xml", dict_dir() + "/FIX50SP2.xml");
  }
  static void TearDownTestSuite() {
    fix42_ = {};
    fix44_ = {};
    fixt_ = {};
  }
  static inline DictionaryLoad fix42_, fix44_, fixt_;
};

TEST_F(StandardDictionaries, loadAllThreeWithoutError) {
  ASSERT_TRUE(fix42_) << fix42_.error;
  ASSERT_TRUE(fix44_) << fix44_.error;
  ASSERT_TRUE(fixt_) << fixt_.error;
  EXPECT_EQ(fix42_.dictionary->begin_string(), "FIX.4.2");
  EXPECT_EQ(fix44_.dictionary->begin_string(), "FIX.4.4");
  EXPECT_EQ(fixt_.dictionary->begin_string(), "FIXT.1.1");
  EXPECT_EQ(fixt_.dictionary->app_version(), "FIX.5.0SP2");
  EXPECT_TRUE(fix44_.error.empty());
}

TEST_F(StandardDictionaries, fieldsCarryNameTypeAndEnumDescriptions) {
  ASSERT_TRUE(fix44_);
  const Dictionary& d = *fix44_.dictionary;
  const FieldDef* side = d.field(tag::Side);
  ASSERT_NE(side, nullptr);
  EXPECT_EQ(side->name, "Side");
  EXPECT_EQ(side->type, FieldType::character);
  ASSERT_NE(side->find_enum("1"), nullptr);
  EXPECT_EQ(side->find_enum("1")->description, "BUY");
  EXPECT_TRUE(side->allows("2"));
  EXPECT_FALSE(side->allows("Z"));
  EXPECT_FALSE(side->allows("12"));
  EXPECT_NE(side->char_set, nullptr);

  const FieldDef* price = d.field(tag::Price);
  ASSERT_NE(price, nullptr);
  EXPECT_EQ(price->type, FieldType::price);
  EXPECT_FALSE(price->has_enums());
  EXPECT_TRUE(price->allows("anything"));
  EXPECT_EQ(d.field(tag::SendingTime)->type, FieldType::utctimestamp);
  EXPECT_EQ(d.field(tag::NoPartyIDs)->type, FieldType::numingroup);
  EXPECT_EQ(d.field(tag::BodyLength)->type, FieldType::length);
  EXPECT_EQ(d.field(tag::MsgSeqNum)->type, FieldType::seqnum);
  EXPECT_EQ(d.field_by_name("ClOrdID")->tag, tag::ClOrdID);
  EXPECT_EQ(d.field(4999), nullptr);
  EXPECT_EQ(d.field(0), nullptr);
  EXPECT_EQ(d.field(1u << 30), nullptr);
}

TEST_F(StandardDictionaries, multiCharacterEnumsAreSearched) {
  ASSERT_TRUE(fix44_);
  const FieldDef* reason = fix44_.dictionary->field(tag::SessionRejectReason);
  ASSERT_NE(reason, nullptr);
  EXPECT_EQ(reason->char_set, nullptr);  // "10", "11", ... are two characters
  EXPECT_TRUE(reason->allows("11"));
  EXPECT_TRUE(reason->allows("99"));
  EXPECT_FALSE(reason->allows("100"));
  EXPECT_EQ(reason->find_enum("5")->description, "VALUE_IS_INCORRECT");
}

TEST_F(StandardDictionaries, headerAndTrailerFieldsAreMarked) {
  ASSERT_TRUE(fix44_);
  const Dictionary& d = *fix44_.dictionary;
  EXPECT_TRUE(d.field(tag::SenderCompID)->in_header);
  EXPECT_FALSE(d.field(tag::SenderCompID)->in_trailer);
  EXPECT_TRUE(d.field(tag::CheckSum)->in_trailer);
  EXPECT_FALSE(d.field(tag::Symbol)->in_header);
  EXPECT_TRUE(d.header().contains(tag::MsgSeqNum));
  EXPECT_TRUE(d.trailer().contains(tag::Signature));
  EXPECT_NE(d.header().group(627), nullptr);  // NoHops
}

TEST_F(StandardDictionaries, componentsAreFlattenedIntoTheMessage) {
  ASSERT_TRUE(fix44_);
  const MessageDef* nos = fix44_.dictionary->message("D");
  ASSERT_NE(nos, nullptr);
  EXPECT_EQ(nos->name, "NewOrderSingle");
  EXPECT_FALSE(nos->admin);
  EXPECT_TRUE(nos->body.contains(tag::Symbol));      // from Instrument
  EXPECT_TRUE(nos->body.contains(tag::OrderQty));    // from OrderQtyData
  EXPECT_TRUE(nos->body.contains(tag::NoPartyIDs));  // from Parties
  EXPECT_FALSE(nos->body.contains(tag::SenderCompID));
  std::vector<std::uint32_t> required;
  for (const std::uint32_t m : nos->body.required()) required.push_back(nos->body.members()[m].tag);
  EXPECT_EQ(required, (std::vector<std::uint32_t>{tag::ClOrdID, tag::Side, tag::TransactTime, tag::OrdType}));
  EXPECT_TRUE(fix44_.dictionary->message("A")->admin);
}

TEST_F(StandardDictionaries, groupsNestWithDelimiterAndMembers) {
  ASSERT_TRUE(fix44_);
  const GroupDef* parties = fix44_.dictionary->group("D", tag::NoPartyIDs);
  ASSERT_NE(parties, nullptr);
  EXPECT_EQ(parties->count_tag(), tag::NoPartyIDs);
  EXPECT_EQ(parties->delimiter(), tag::PartyID);
  EXPECT_EQ(parties->name(), "NoPartyIDs");
  EXPECT_TRUE(parties->fields().contains(tag::PartyRole));
  const GroupDef* subs = parties->group(802);  // NoPartySubIDs
  ASSERT_NE(subs, nullptr);
  EXPECT_EQ(subs->delimiter(), 523u);  // PartySubID
  EXPECT_EQ(fix44_.dictionary->group("D", tag::Symbol), nullptr);
  EXPECT_EQ(fix44_.dictionary->group("no such type", tag::NoPartyIDs), nullptr);
  // The same component's group is resolved once and shared.
  EXPECT_EQ(fix44_.dictionary->group("8", tag::NoPartyIDs), parties);
}

TEST_F(StandardDictionaries, fix42GroupsNestInsideInlineGroups) {
  ASSERT_TRUE(fix42_);
  const GroupDef* orders = fix42_.dictionary->group("E", 73);  // NewOrderList / NoOrders
  ASSERT_NE(orders, nullptr);
  EXPECT_EQ(orders->delimiter(), tag::ClOrdID);
  const GroupDef* allocs = orders->group(78);  // NoAllocs
  ASSERT_NE(allocs, nullptr);
  EXPECT_EQ(allocs->delimiter(), 79u);
  std::vector<std::uint32_t> required;
  for (const std::uint32_t m : orders->fields().required()) required.push_back(orders->fields().members()[m].tag);
  EXPECT_NE(std::find(required.begin(), required.end(), 67u), required.end());  // ListSeqNo
}

TEST_F(StandardDictionaries, fixtTakesSessionPartsFromTransportAndMessagesFromApplication) {
  ASSERT_TRUE(fixt_);
  const Dictionary& d = *fixt_.dictionary;
  EXPECT_TRUE(d.header().contains(tag::ApplVerID));
  ASSERT_NE(d.message("A"), nullptr);
  EXPECT_TRUE(d.message("A")->admin);
  EXPECT_TRUE(d.message("A")->body.contains(tag::DefaultApplVerID));
  ASSERT_NE(d.message("D"), nullptr);
  EXPECT_FALSE(d.message("D")->admin);
  EXPECT_NE(d.group("D", tag::NoPartyIDs), nullptr);
  ASSERT_NE(d.field(50002), nullptr);  // high standard tags stay O(1)
  ASSERT_NE(d.field(41000), nullptr);
  EXPECT_EQ(d.field(tag::ApplVerID)->find_enum("9")->description, "FIX50_SP2");
  // FIXT11.xml lists MsgType without values; FIX50SP2.xml's are borrowed.
  ASSERT_NE(d.field(tag::MsgType)->find_enum("A"), nullptr);
  EXPECT_EQ(d.field(tag::MsgType)->find_enum("A")->description, "LOGON");
  EXPECT_TRUE(d.field(tag::SenderCompID)->free_text);
  EXPECT_FALSE(d.field(tag::Side)->free_text);
  EXPECT_GT(d.messages().size(), 100u);
}

TEST_F(StandardDictionaries, lengthFieldsArePairedWithTheirDataFields) {
  ASSERT_TRUE(fix44_);
  ASSERT_TRUE(fixt_);
  const auto has = [](const Dictionary& d, std::uint32_t len, std::uint32_t data) {
    for (const Dictionary::DataPair& p : d.data_pairs())
      if (p.length_tag == len) return p.data_tag == data;
    return false;
  };
  EXPECT_TRUE(has(*fix44_.dictionary, tag::SignatureLength, tag::Signature));
  EXPECT_TRUE(has(*fix44_.dictionary, tag::SecureDataLen, tag::SecureData));
  EXPECT_TRUE(has(*fix44_.dictionary, tag::RawDataLength, tag::RawData));
  EXPECT_TRUE(has(*fix44_.dictionary, tag::XmlDataLen, tag::XmlData));
  EXPECT_TRUE(has(*fix44_.dictionary, tag::EncodedTextLen, tag::EncodedText));
  EXPECT_FALSE(has(*fix44_.dictionary, tag::BodyLength, 0));
  EXPECT_TRUE(has(*fixt_.dictionary, 1401, 1402));  // EncryptedPasswordLen
  // Every data field of the standard files has its length field.
  for (const DictionaryLoad* l : {&fix42_, &fix44_, &fixt_}) {
    std::size_t data = 0;
    for (const FieldDef& f : l->dictionary->fields())
      data += f.type == FieldType::data || f.type == FieldType::xmldata ? 1 : 0;
    EXPECT_EQ(l->dictionary->data_pairs().size(), data) << l->dictionary->begin_string();
  }
}

// The index's built-in table (include/kite/codec/data_pairs.hpp, generated)
// holds exactly the pairs the dictionaries define.
TEST_F(StandardDictionaries, theIndexKnowsEveryLengthFieldOfTheDictionaries) {
  ASSERT_TRUE(fix42_ && fix44_ && fixt_);
  std::set<std::pair<std::uint32_t, std::uint32_t>> from_dictionaries, built_in;
  for (const DictionaryLoad* l : {&fix42_, &fix44_, &fixt_})
    for (const Dictionary::DataPair& p : l->dictionary->data_pairs())
      from_dictionaries.insert({p.length_tag, p.data_tag});
  for (const detail::LengthDataPair& p : detail::kLengthDataPairs) built_in.insert({p.length_tag, p.data_tag});
  EXPECT_EQ(built_in, from_dictionaries);
  EXPECT_EQ(built_in.size(), std::size(detail::kLengthDataPairs)) << "one entry per length tag";
}

TEST_F(StandardDictionaries, loadForPicksFilesByBeginString) {
  const DictionaryLoad a = Dictionary::load_for(dict_dir(), "FIX.4.2");
  ASSERT_TRUE(a) << a.error;
  EXPECT_EQ(a.dictionary->begin_string(), "FIX.4.2");
  const DictionaryLoad b = Dictionary::load_for(dict_dir(), "FIXT.1.1");
  ASSERT_TRUE(b) << b.error;
  EXPECT_NE(b.dictionary->message("AE"), nullptr);  // TradeCaptureReport, application
  const DictionaryLoad c = Dictionary::load_for(dict_dir(), "FOO");
  EXPECT_FALSE(c);
  EXPECT_NE(c.error.find("FOO"), std::string::npos);
}

TEST(DictionaryLoadErrors, missingFileIsNamed) {
  const DictionaryLoad r = Dictionary::load("/nonexistent-kite/FIX99.xml");
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("FIX99.xml"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("cannot open"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, malformedXmlIsNamedWithItsOffset) {
  const std::string path = write_temp("bad.xml", "<fix major='4' minor='4'><fields><field></fix>");
  const DictionaryLoad r = Dictionary::load(path);
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find(path), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("XML error"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, missingRootElement) {
  const DictionaryLoad r = Dictionary::load(write_temp("noroot.xml", "<fox/>"));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("<fix>"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, undefinedFieldReference) {
  const DictionaryLoad r = Dictionary::load(write_temp(
      "undef.xml", tiny_xml("", "<message name='X' msgtype='X'><field name='Nope' required='Y'/></message>")));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("undefined field 'Nope'"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("message 'X'"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, undefinedComponentReference) {
  const DictionaryLoad r = Dictionary::load(write_temp(
      "nocomp.xml", tiny_xml("", "<message name='X' msgtype='X'><component name='Ghost' required='N'/></message>")));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("undefined component 'Ghost'"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, unknownFieldType) {
  const DictionaryLoad r =
      Dictionary::load(write_temp("type.xml", tiny_xml("<field number='11' name='ClOrdID' type='BLOB'/>")));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("unknown type 'BLOB'"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, badFieldNumber) {
  const DictionaryLoad r =
      Dictionary::load(write_temp("number.xml", tiny_xml("<field number='x1' name='ClOrdID' type='STRING'/>")));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("invalid number 'x1'"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, duplicateMsgType) {
  const DictionaryLoad r =
      Dictionary::load(write_temp("dup.xml", tiny_xml("", "<message name='Again' msgtype='0' msgcat='admin'/>")));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("msgtype '0' is defined twice"), std::string::npos) << r.error;
}

TEST(DictionaryLoadErrors, componentCycleIsCaught) {
  const std::string xml =
      "<fix type='FIX' major='4' minor='4'><header/><trailer/>"
      "<messages><message name='X' msgtype='X'><component name='A' required='N'/></message></messages>"
      "<components><component name='A'><component name='B'/></component>"
      "<component name='B'><component name='A'/></component></components>"
      "<fields><field number='1' name='Account' type='STRING'/></fields></fix>";
  const DictionaryLoad r = Dictionary::load(write_temp("cycle.xml", xml));
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("cycle"), std::string::npos) << r.error;
}

TEST(DictionaryCustom, tagsAboveTheDenseLimitAreFound) {
  const DictionaryLoad r = Dictionary::load(write_temp(
      "big.xml",
      tiny_xml("<field number='70000' name='Custom' type='INT'/><field number='5001' name='Mine' type='QTY'/>",
               "<message name='Custom' msgtype='U1000' msgcat='app'><field name='Custom' required='Y'/>"
               "</message><message name='LongType' msgtype='ABCDEFGHIJ'/>")));
  ASSERT_TRUE(r) << r.error;
  const Dictionary& d = *r.dictionary;
  ASSERT_NE(d.field(70000), nullptr);
  EXPECT_EQ(d.field(70000)->name, "Custom");
  EXPECT_EQ(d.field(69999), nullptr);
  EXPECT_EQ(d.field(5001)->type, FieldType::qty);
  ASSERT_NE(d.message("U1000"), nullptr);
  EXPECT_TRUE(d.message("U1000")->body.contains(70000));
  ASSERT_NE(d.message("ABCDEFGHIJ"), nullptr);
  EXPECT_EQ(d.message("ABCDEFGHIJ")->name, "LongType");
  EXPECT_EQ(d.message("U1001"), nullptr);
  EXPECT_EQ(d.message(""), nullptr);
}

TEST(FieldTypes, namesRoundTrip) {
  for (const char* n : {"INT",
                        "LENGTH",
                        "SEQNUM",
                        "NUMINGROUP",
                        "TAGNUM",
                        "DAYOFMONTH",
                        "FLOAT",
                        "QTY",
                        "PRICE",
                        "PRICEOFFSET",
                        "AMT",
                        "PERCENTAGE",
                        "CHAR",
                        "BOOLEAN",
                        "STRING",
                        "MULTIPLEVALUESTRING",
                        "MULTIPLECHARVALUE",
                        "MULTIPLESTRINGVALUE",
                        "COUNTRY",
                        "CURRENCY",
                        "EXCHANGE",
                        "MONTHYEAR",
                        "UTCTIMESTAMP",
                        "UTCTIMEONLY",
                        "UTCDATEONLY",
                        "UTCDATE",
                        "LOCALMKTDATE",
                        "LOCALMKTTIME",
                        "TZTIMEONLY",
                        "TZTIMESTAMP",
                        "DATA",
                        "XMLDATA",
                        "LANGUAGE",
                        "XID",
                        "XIDREF"}) {
    const FieldType t = field_type_from_name(n);
    EXPECT_NE(t, FieldType::unknown) << n;
    EXPECT_STREQ(to_string(t), n);
  }
  EXPECT_EQ(field_type_from_name("NOPE"), FieldType::unknown);
}

}  // namespace
}  // namespace kite::codec
