// Loading a QuickFIX-layout XML dictionary into flat, lookup-ready tables.
// Everything here runs at set-up; errors are returned as text naming the file.
#include "kite/codec/dictionary.hpp"

#include <pugixml.hpp>

#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <utility>

namespace kite::codec {

namespace {

struct TypeName {
  const char* name;
  FieldType type;
};

constexpr TypeName kTypeNames[] = {
    {"INT", FieldType::integer},
    {"LENGTH", FieldType::length},
    {"SEQNUM", FieldType::seqnum},
    {"NUMINGROUP", FieldType::numingroup},
    {"TAGNUM", FieldType::tagnum},
    {"DAYOFMONTH", FieldType::dayofmonth},
    {"FLOAT", FieldType::floating},
    {"QTY", FieldType::qty},
    {"QUANTITY", FieldType::qty},
    {"PRICE", FieldType::price},
    {"PRICEOFFSET", FieldType::priceoffset},
    {"AMT", FieldType::amt},
    {"PERCENTAGE", FieldType::percentage},
    {"CHAR", FieldType::character},
    {"BOOLEAN", FieldType::boolean},
    {"STRING", FieldType::string},
    {"MULTIPLEVALUESTRING", FieldType::multiplevaluestring},
    {"MULTIPLECHARVALUE", FieldType::multiplecharvalue},
    {"MULTIPLESTRINGVALUE", FieldType::multiplestringvalue},
    {"COUNTRY", FieldType::country},
    {"CURRENCY", FieldType::currency},
    {"EXCHANGE", FieldType::exchange},
    {"LANGUAGE", FieldType::language},
    {"XID", FieldType::xid},
    {"XIDREF", FieldType::xidref},
    {"MONTHYEAR", FieldType::monthyear},
    {"UTCTIMESTAMP", FieldType::utctimestamp},
    {"TIME", FieldType::utctimestamp},  // FIX 4.0/4.1 spelling
    {"UTCTIMEONLY", FieldType::utctimeonly},
    {"UTCDATEONLY", FieldType::utcdateonly},
    {"UTCDATE", FieldType::utcdate},
    {"DATE", FieldType::utcdate},  // FIX 4.0/4.1 spelling
    {"LOCALMKTDATE", FieldType::localmktdate},
    {"LOCALMKTTIME", FieldType::localmkttime},
    {"TZTIMEONLY", FieldType::tztimeonly},
    {"TZTIMESTAMP", FieldType::tztimestamp},
    {"DATA", FieldType::data},
    {"XMLDATA", FieldType::xmldata},
};

std::uint64_t pack_msg_type(std::string_view s) noexcept {
  std::uint64_t k = 0;
  std::memcpy(&k, s.data(), s.size());
  return k;
}

std::uint32_t msg_hash(std::uint64_t key) noexcept {
  return static_cast<std::uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 40);
}

}  // namespace

const char* to_string(FieldType t) noexcept {
  if (t == FieldType::utctimestamp) return "UTCTIMESTAMP";
  if (t == FieldType::utcdate) return "UTCDATE";
  if (t == FieldType::qty) return "QTY";
  for (const TypeName& n : kTypeNames)
    if (n.type == t) return n.name;
  return "UNKNOWN";
}

FieldType field_type_from_name(std::string_view name) noexcept {
  for (const TypeName& n : kTypeNames)
    if (name == n.name) return n.type;
  return FieldType::unknown;
}

const EnumValue* FieldDef::find_enum(std::string_view v) const noexcept {
  const auto it = std::lower_bound(enums.begin(), enums.end(), v,
                                   [](const EnumValue& e, std::string_view x) { return e.value < x; });
  return it != enums.end() && it->value == v ? &*it : nullptr;
}

void FieldSet::add(const Member& m) {
  for (const Member& x : members_)
    if (x.tag == m.tag) return;
  if (m.required) required_.push_back(static_cast<std::uint32_t>(members_.size()));
  members_.push_back(m);
}

void FieldSet::seal() {
  std::uint32_t size = 8;
  while (size < members_.size() * 2) size *= 2;
  slots_.assign(size, Slot{});
  mask_ = size - 1;
  for (std::uint32_t i = 0; i < members_.size(); ++i) {
    std::uint32_t h = (members_[i].tag * 0x9E3779B1u) >> 16;
    while (slots_[h & mask_].tag != 0) ++h;
    slots_[h & mask_] = {members_[i].tag, i};
  }
}

Dictionary::~Dictionary() = default;

const FieldDef* Dictionary::field_sparse(std::uint32_t tag) const noexcept {
  const auto it =
      std::lower_bound(sparse_.begin(), sparse_.end(), tag,
                       [](const std::pair<std::uint32_t, std::uint32_t>& e, std::uint32_t t) { return e.first < t; });
  return it != sparse_.end() && it->first == tag ? &fields_[it->second] : nullptr;
}

const FieldDef* Dictionary::field_by_name(std::string_view name) const noexcept {
  for (const FieldDef& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

const MessageDef* Dictionary::message(std::string_view msg_type) const noexcept {
  if (msg_type.empty()) return nullptr;
  if (msg_type.size() > 8) {
    for (const MessageDef& m : messages_)
      if (m.msg_type == msg_type) return &m;
    return nullptr;
  }
  const std::uint64_t key = pack_msg_type(msg_type);
  for (std::uint32_t h = msg_hash(key);; ++h) {
    const MsgSlot& s = msg_slots_[h & msg_mask_];
    if (s.key == key) return &messages_[s.index];
    if (s.key == 0) return nullptr;
  }
}

const GroupDef* Dictionary::group(std::string_view msg_type, std::uint32_t count_tag) const noexcept {
  if (const MessageDef* m = message(msg_type)) {
    if (const GroupDef* g = m->body.group(count_tag)) return g;
  }
  if (const GroupDef* g = header_.group(count_tag)) return g;
  return trailer_.group(count_tag);
}

// Builds a Dictionary from one or two XML documents.
class DictionaryBuilder {
 public:
  DictionaryBuilder() : d_(new Dictionary()) {}

  // Adds one document. `take_header` takes its header and trailer; `first`
  // makes its version the BeginString. Messages already defined are kept.
  bool add(const std::string& path, bool take_header, bool first);
  DictionaryLoad finish();
  std::string error;

 private:
  struct Doc {
    std::string path;
    pugi::xml_document xml;
    std::unordered_map<std::string, std::uint32_t> tag_by_name;  // this document's fields
    std::unordered_map<std::string, pugi::xml_node> components;
    std::unordered_map<const void*, const GroupDef*> groups;  // <group> node -> resolved
    bool char_is_string = false;                              // FIX.4.0 and 4.1 typed their strings "char"
  };

  bool fail(const Doc& doc, const std::string& what) {
    error = doc.path + ": " + what;
    return false;
  }
  std::string_view intern(std::string_view s) {
    d_->strings_.emplace_back(s);
    return d_->strings_.back();
  }
  bool load_fields(Doc& doc, pugi::xml_node fields);
  bool resolve(Doc& doc, pugi::xml_node parent, FieldSet& out, bool required, const std::string& where, int depth);
  bool resolve_group(Doc& doc, pugi::xml_node node, const GroupDef*& out, const std::string& where, int depth);

  struct PendingEnums {
    std::uint32_t first = 0;
    std::uint32_t count = 0;
  };
  std::unique_ptr<Dictionary> d_;
  std::vector<PendingEnums> pending_;  // per field id, until finish() fixes spans
  std::unordered_map<std::uint32_t, std::uint32_t> id_by_tag_;
  std::unordered_map<std::string, std::uint32_t> msg_by_type_;
  std::vector<std::unique_ptr<Doc>> docs_;
};

bool DictionaryBuilder::load_fields(Doc& doc, pugi::xml_node fields) {
  for (pugi::xml_node f : fields.children("field")) {
    const std::string name = f.attribute("name").as_string();
    const std::string number = f.attribute("number").as_string();
    const std::string type_name = f.attribute("type").as_string();
    if (name.empty()) return fail(doc, "a <field> in <fields> has no name");
    std::uint64_t tag = 0;
    if (number.empty() || number.size() > 9 || number.find_first_not_of("0123456789") != std::string::npos ||
        (tag = std::stoull(number)) == 0) {
      return fail(doc, "field '" + name + "' has an invalid number '" + number + "'");
    }
    FieldType type = field_type_from_name(type_name);
    if (type == FieldType::character && doc.char_is_string) type = FieldType::string;
    if (type == FieldType::unknown) return fail(doc, "field '" + name + "' has an unknown type '" + type_name + "'");
    if (!doc.tag_by_name.emplace(name, static_cast<std::uint32_t>(tag)).second)
      return fail(doc, "field '" + name + "' is defined twice");
    if (const auto known = id_by_tag_.find(static_cast<std::uint32_t>(tag)); known != id_by_tag_.end()) {
      // An earlier document's definition wins; it only borrows enums it lacks
      // (FIXT11.xml lists MsgType without values, FIX50SP2.xml with them).
      PendingEnums& pe = pending_[known->second];
      if (pe.count == 0 && f.child("value")) {
        pe.first = static_cast<std::uint32_t>(d_->enums_.size());
        for (pugi::xml_node v : f.children("value"))
          d_->enums_.push_back(
              {intern(v.attribute("enum").as_string()), intern(v.attribute("description").as_string())});
        pe.count = static_cast<std::uint32_t>(d_->enums_.size()) - pe.first;
        std::sort(d_->enums_.begin() + pe.first, d_->enums_.end(),
                  [](const EnumValue& a, const EnumValue& b) { return a.value < b.value; });
      }
      continue;
    }

    FieldDef def;
    def.tag = static_cast<std::uint32_t>(tag);
    def.id = static_cast<std::uint32_t>(d_->fields_.size());
    def.type = type;
    def.name = intern(name);
    PendingEnums pe;
    pe.first = static_cast<std::uint32_t>(d_->enums_.size());
    for (pugi::xml_node v : f.children("value")) {
      const pugi::xml_attribute e = v.attribute("enum");
      if (!e) return fail(doc, "field '" + name + "' has a <value> without enum");
      d_->enums_.push_back({intern(e.as_string()), intern(v.attribute("description").as_string())});
    }
    pe.count = static_cast<std::uint32_t>(d_->enums_.size()) - pe.first;
    std::sort(d_->enums_.begin() + pe.first, d_->enums_.end(),
              [](const EnumValue& a, const EnumValue& b) { return a.value < b.value; });
    id_by_tag_.emplace(def.tag, def.id);
    d_->fields_.push_back(def);
    pending_.push_back(pe);
  }
  return true;
}

bool DictionaryBuilder::resolve_group(Doc& doc, pugi::xml_node node, const GroupDef*& out, const std::string& where,
                                      int depth) {
  if (const auto it = doc.groups.find(node.internal_object()); it != doc.groups.end()) {
    out = it->second;
    return true;
  }
  const std::string name = node.attribute("name").as_string();
  const auto t = doc.tag_by_name.find(name);
  if (t == doc.tag_by_name.end()) return fail(doc, where + ": group '" + name + "' is not a defined field");
  GroupDef& g = d_->groups_.emplace_back();
  g.count_tag_ = t->second;
  g.name_ = intern(name);
  if (!resolve(doc, node, g.fields_, true, where + "/" + name, depth + 1)) return false;
  if (g.fields_.members_.empty()) return fail(doc, where + ": group '" + name + "' has no fields");
  g.delimiter_ = g.fields_.members_.front().tag;
  g.fields_.seal();
  doc.groups.emplace(node.internal_object(), &g);
  out = &g;
  return true;
}

bool DictionaryBuilder::resolve(Doc& doc, pugi::xml_node parent, FieldSet& out, bool required, const std::string& where,
                                int depth) {
  if (depth > 32) return fail(doc, where + ": components nest more than 32 deep (a cycle?)");
  for (pugi::xml_node n : parent.children()) {
    if (n.type() != pugi::node_element) continue;
    const std::string_view kind = n.name();
    const std::string name = n.attribute("name").as_string();
    const bool req = required && std::string_view(n.attribute("required").as_string()) == "Y";
    if (kind == "field") {
      const auto t = doc.tag_by_name.find(name);
      if (t == doc.tag_by_name.end()) return fail(doc, where + " references undefined field '" + name + "'");
      out.add({t->second, id_by_tag_.at(t->second), req, nullptr});
    } else if (kind == "group") {
      const GroupDef* g = nullptr;
      if (!resolve_group(doc, n, g, where, depth)) return false;
      out.add({g->count_tag(), id_by_tag_.at(g->count_tag()), req, g});
    } else if (kind == "component") {
      const auto c = doc.components.find(name);
      if (c == doc.components.end()) return fail(doc, where + " references undefined component '" + name + "'");
      if (!resolve(doc, c->second, out, req, where, depth + 1)) return false;
    } else {
      return fail(doc, where + ": unexpected element <" + std::string(kind) + ">");
    }
  }
  return true;
}

bool DictionaryBuilder::add(const std::string& path, bool take_header, bool first) {
  auto doc_ptr = std::make_unique<Doc>();
  Doc& doc = *doc_ptr;
  doc.path = path;
  const pugi::xml_parse_result r = doc.xml.load_file(path.c_str());
  if (!r) {
    if (r.status == pugi::status_file_not_found || r.status == pugi::status_io_error)
      return fail(doc, "cannot open the dictionary file");
    return fail(doc, std::string("XML error at byte ") + std::to_string(r.offset) + ": " + r.description());
  }
  const pugi::xml_node fix = doc.xml.child("fix");
  if (!fix) return fail(doc, "no <fix> root element");
  const std::string type = fix.attribute("type").as_string("FIX");
  const std::string major = fix.attribute("major").as_string();
  const std::string minor = fix.attribute("minor").as_string();
  const std::string sp = fix.attribute("servicepack").as_string("0");
  if (major.empty() || minor.empty()) return fail(doc, "<fix> lacks the major/minor version attributes");
  std::string version = type + "." + major + "." + minor;
  if (first) d_->begin_string_ = version;
  if (sp != "0" && !sp.empty()) version += "SP" + sp;
  d_->app_version_ = version;
  doc.char_is_string = type == "FIX" && major == "4" && (minor == "0" || minor == "1");

  const pugi::xml_node fields = fix.child("fields");
  if (!fields) return fail(doc, "no <fields> section");
  if (!load_fields(doc, fields)) return false;
  for (pugi::xml_node c : fix.child("components").children("component")) {
    const std::string name = c.attribute("name").as_string();
    if (name.empty()) return fail(doc, "a <component> in <components> has no name");
    doc.components.emplace(name, c);
  }
  if (take_header) {
    if (!fix.child("header")) return fail(doc, "no <header> section");
    if (!fix.child("trailer")) return fail(doc, "no <trailer> section");
    if (!resolve(doc, fix.child("header"), d_->header_, true, "header", 0)) return false;
    if (!resolve(doc, fix.child("trailer"), d_->trailer_, true, "trailer", 0)) return false;
  }
  const pugi::xml_node messages = fix.child("messages");
  if (!messages) return fail(doc, "no <messages> section");
  for (pugi::xml_node m : messages.children("message")) {
    const std::string name = m.attribute("name").as_string();
    const std::string msg_type = m.attribute("msgtype").as_string();
    if (msg_type.empty()) return fail(doc, "message '" + name + "' has no msgtype");
    if (msg_by_type_.count(msg_type) != 0) {
      if (first) return fail(doc, "msgtype '" + msg_type + "' is defined twice");
      continue;  // the transport dictionary's definition wins
    }
    MessageDef def;
    def.msg_type = intern(msg_type);
    def.name = intern(name);
    def.admin = std::string_view(m.attribute("msgcat").as_string()) == "admin";
    if (!resolve(doc, m, def.body, true, "message '" + name + "'", 0)) return false;
    def.body.seal();
    msg_by_type_.emplace(msg_type, static_cast<std::uint32_t>(d_->messages_.size()));
    d_->messages_.push_back(std::move(def));
  }
  docs_.push_back(std::move(doc_ptr));
  return true;
}

DictionaryLoad DictionaryBuilder::finish() {
  Dictionary& d = *d_;
  d.header_.seal();
  d.trailer_.seal();

  // Enum spans and single-character sets, now that the tables stop growing.
  std::vector<std::int64_t> set_of(d.fields_.size(), -1);
  for (const FieldDef& f : d.fields_) {
    const PendingEnums& pe = pending_[f.id];
    bool single = pe.count != 0;
    for (std::uint32_t i = 0; i < pe.count; ++i) single = single && d.enums_[pe.first + i].value.size() == 1;
    if (!single) continue;
    const std::size_t at = d.char_sets_.size();
    d.char_sets_.resize(at + 4, 0);
    for (std::uint32_t i = 0; i < pe.count; ++i) {
      const auto c = static_cast<unsigned char>(d.enums_[pe.first + i].value[0]);
      d.char_sets_[at + (c >> 6)] |= std::uint64_t{1} << (c & 63);
    }
    set_of[f.id] = static_cast<std::int64_t>(at);
  }
  for (FieldDef& f : d.fields_) {
    const PendingEnums& pe = pending_[f.id];
    f.enums = std::span<const EnumValue>(d.enums_.data() + pe.first, pe.count);
    if (set_of[f.id] >= 0) f.char_set = d.char_sets_.data() + set_of[f.id];
    const bool free_type = f.type == FieldType::string || f.type == FieldType::exchange ||
                           f.type == FieldType::language || f.type == FieldType::xid || f.type == FieldType::xidref ||
                           f.type == FieldType::data || f.type == FieldType::xmldata;
    f.free_text = free_type && f.enums.empty();
  }

  std::uint32_t max_tag = 0;
  for (const FieldDef& f : d.fields_) max_tag = std::max(max_tag, f.tag);
  d.dense_.assign(std::min(max_tag + 1, Dictionary::kDenseTagLimit), 0);
  for (const FieldDef& f : d.fields_) {
    if (f.tag < d.dense_.size()) {
      d.dense_[f.tag] = f.id + 1;
    } else {
      d.sparse_.emplace_back(f.tag, f.id);
    }
  }
  std::sort(d.sparse_.begin(), d.sparse_.end());
  // Length fields pair with data fields by name, else (one irregular name in
  // FIX50SP2) with the data field numbered right after them.
  const auto is_data = [](const FieldDef* f) {
    return f != nullptr && (f->type == FieldType::data || f->type == FieldType::xmldata);
  };
  for (const FieldDef& len : d.fields_) {
    if (len.type != FieldType::length) continue;
    std::string_view base = len.name;
    if (base.size() > 6 && base.substr(base.size() - 6) == "Length") {
      base.remove_suffix(6);
    } else if (base.size() > 3 && base.substr(base.size() - 3) == "Len") {
      base.remove_suffix(3);
    }
    const FieldDef* match = nullptr;
    for (const FieldDef& data : d.fields_) {
      if (is_data(&data) && data.name == base) {
        match = &data;
        break;
      }
    }
    if (match == nullptr && is_data(d.field(len.tag + 1))) match = d.field(len.tag + 1);
    if (match != nullptr) d.data_pairs_.push_back({len.tag, match->tag});
  }
  std::sort(d.data_pairs_.begin(), d.data_pairs_.end(),
            [](const Dictionary::DataPair& a, const Dictionary::DataPair& b) { return a.length_tag < b.length_tag; });
  for (const Member& m : d.header_.members()) d.fields_[m.field_id].in_header = true;
  for (const Member& m : d.trailer_.members()) d.fields_[m.field_id].in_trailer = true;

  std::uint32_t size = 16;
  while (size < d.messages_.size() * 2) size *= 2;
  d.msg_slots_.assign(size, {});
  d.msg_mask_ = size - 1;
  for (std::uint32_t i = 0; i < d.messages_.size(); ++i) {
    const std::string_view t = d.messages_[i].msg_type;
    if (t.size() > 8) continue;  // found by the linear fallback
    const std::uint64_t key = pack_msg_type(t);
    std::uint32_t h = msg_hash(key);
    while (d.msg_slots_[h & d.msg_mask_].key != 0) ++h;
    d.msg_slots_[h & d.msg_mask_] = {key, i};
  }
  DictionaryLoad out;
  out.dictionary = std::shared_ptr<const Dictionary>(d_.release());
  return out;
}

DictionaryLoad Dictionary::load(const std::string& path) {
  DictionaryBuilder b;
  if (!b.add(path, true, true)) return {nullptr, b.error};
  return b.finish();
}

DictionaryLoad Dictionary::load(const std::string& transport_path, const std::string& app_path) {
  DictionaryBuilder b;
  if (!b.add(transport_path, true, true)) return {nullptr, b.error};
  if (!b.add(app_path, false, false)) return {nullptr, b.error};
  return b.finish();
}

DictionaryLoad Dictionary::load_for(const std::string& dir, std::string_view begin_string) {
  const std::string base = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  if (begin_string == "FIXT.1.1") return load(base + "FIXT11.xml", base + "FIX50SP2.xml");
  // "FIX.4.4" -> "FIX44.xml"
  if (begin_string.size() == 7 && begin_string.substr(0, 4) == "FIX." && begin_string[5] == '.') {
    std::string file = base + "FIX";
    file += begin_string[4];
    file += begin_string[6];
    file += ".xml";
    return load(file);
  }
  return {nullptr, "no dictionary for BeginString '" + std::string(begin_string) + "'"};
}

}  // namespace kite::codec
