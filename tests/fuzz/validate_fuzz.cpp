// libFuzzer target: validation and repeating-group iteration.
//
// Input: one byte choosing the BeginString ('2' FIX.4.2, 'T' FIXT.1.1 with
// FIX50SP2, anything else FIX.4.4), then a message body ("35=D<SOH>...").
// The harness adds BeginString, BodyLength and CheckSum so that mutations
// reach the validator instead of dying on a checksum. Each message is
// validated with strict and with permissive options and every top-level
// group is walked; invariants (positions inside the index, entries inside
// their group) are checked.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "kite/codec/framer.hpp"
#include "kite/codec/group.hpp"
#include "kite/codec/header.hpp"
#include "kite/codec/validator.hpp"
#include "kite/util/dictionary_dir.hpp"

namespace {

using namespace kite::codec;

struct Loaded {
  std::shared_ptr<const Dictionary> dict;
  std::unique_ptr<Validator> strict;
  std::unique_ptr<Validator> lenient;
};

Loaded g_fix42, g_fix44, g_fixt;
FieldIndex* g_ix = nullptr;
std::string* g_msg = nullptr;

void load(Loaded& l, DictionaryLoad d) {
  if (!d) {
    std::fprintf(stderr, "validate_fuzz: %s\n", d.error.c_str());
    std::abort();
  }
  l.dict = d.dictionary;
  l.strict = std::make_unique<Validator>(*l.dict);
  ValidationOptions o;
  o.check_fields_out_of_order = false;
  o.allow_user_defined_fields = true;
  o.allow_unknown_fields = true;
  l.lenient = std::make_unique<Validator>(*l.dict, o);
}

void check(bool ok) {
  if (!ok) std::abort();
}

void walk(const FieldIndex& ix, const GroupView& g, std::uint32_t lo, std::uint32_t hi, int depth) {
  check(depth < 64);
  std::uint32_t prev_end = g.count_pos() + 1;
  for (const GroupEntry e : g) {
    check(e.begin() == prev_end && e.begin() < e.end() && e.end() <= hi && e.begin() >= lo);
    check(ix[e.begin()].tag == g.def()->delimiter());
    prev_end = e.end();
    for (const Member& m : g.def()->fields().members()) {
      if (m.group == nullptr) continue;
      const GroupView nested = e.group(m.tag);
      if (nested) walk(ix, nested, e.begin(), e.end(), depth + 1);
    }
  }
  check(g.end_pos() == prev_end);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string dir = kite::util::dictionary_dir();
  load(g_fix42, Dictionary::load(dir + "/FIX42.xml"));
  load(g_fix44, Dictionary::load(dir + "/FIX44.xml"));
  load(g_fixt, Dictionary::load(dir + "/FIXT11.xml", dir + "/FIX50SP2.xml"));
  g_ix = new FieldIndex(8192);
  g_msg = new std::string();
  g_msg->reserve(40 * 1024);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 32 * 1024) return 0;
  const char* bs = data[0] == '2' ? "FIX.4.2" : data[0] == 'T' ? "FIXT.1.1" : "FIX.4.4";
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string& m = *g_msg;
  m.clear();  // capacity reserved at start: no allocation per input
  m.append("8=").append(bs).push_back(kSoh);
  m.append("9=").append(std::to_string(body.size() + (body.empty() || body.back() != kSoh ? 1 : 0))).push_back(kSoh);
  m.append(body);
  if (body.empty() || body.back() != kSoh) m.push_back(kSoh);
  char tail[8];
  std::snprintf(tail, sizeof tail, "10=%03u", ScalarScan::checksum(m.data(), m.data() + m.size()));
  m.append(tail).push_back(kSoh);

  const FrameResult fr = frame(m.data(), m.size(), 1u << 20);
  check(fr.status == FrameStatus::complete && fr.size == m.size());
  FieldIndex& ix = *g_ix;
  if (!ix.build(m.data(), fr.size)) return 0;
  Header h;
  if (!read_header(ix, h)) return 0;
  Loaded* l = data[0] == '2' ? &g_fix42 : data[0] == 'T' ? &g_fixt : &g_fix44;

  for (Validator* v : {l->strict.get(), l->lenient.get()}) {
    const ValidationResult r = v->validate(ix, h);
    check(r.text != nullptr);
    check(r.ok ? r.position == ix.size() : r.position <= ix.size());
    if (!r.ok) check(r.text[0] != '\0');
  }
  // Every top-level group the dictionary knows for this MsgType.
  for (std::uint32_t i = 0; i < ix.size(); ++i) {
    const GroupDef* g = l->dict->group(h.msg_type, ix[i].tag);
    if (g == nullptr) continue;
    const GroupView view(ix, i, *g);
    walk(ix, view, i + 1, ix.size(), 0);
  }
  return 0;
}
