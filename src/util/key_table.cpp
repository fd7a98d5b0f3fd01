#include "kite/util/key_table.hpp"

namespace kite::util {

bool Setting::flag() const {
  if (const auto* v = node.as_boolean()) return v->get();
  if (const auto* s = node.as_string()) {  // QuickFIX files say Y/N
    if (s->get() == "Y") return true;
    if (s->get() == "N") return false;
  }
  reader.wrong_type(node, path, "true/false (or \"Y\"/\"N\")");
}

std::string setting_path(std::string_view where, std::string_view key) {
  std::string p(where);
  p.append(": setting ").append(key);
  return p;
}

}  // namespace kite::util
