// kite-fixprint: pretty-prints FIX messages found in logs, captures as text
// or raw streams. Fields may be separated by SOH, '|' or the two characters
// "^A" (detected per message); anything before "8=" on a line (a timestamp,
// "IN:", "OUT:") is kept as the message's prefix. Each message becomes one
// block: a title, then one line per field with its dictionary name and enum
// description, repeating groups indented. Frames that do not frame or index
// are flagged with the reason, and printing goes on with the next message.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/dictionary.hpp"
#include "kite/codec/field_index.hpp"
#include "kite/codec/framer.hpp"
#include "kite/codec/group.hpp"
#include "kite/codec/header.hpp"
#include "kite/codec/validator.hpp"
#include "kite/util/dictionary_dir.hpp"

namespace kite::tools {
namespace {

using namespace kite::codec;

struct Style {
  bool on = false;
  const char* title() const { return on ? "\033[1;36m" : ""; }
  const char* tag() const { return on ? "\033[2m" : ""; }
  const char* name() const { return on ? "\033[32m" : ""; }
  const char* desc() const { return on ? "\033[33m" : ""; }
  const char* bad() const { return on ? "\033[1;31m" : ""; }
  const char* reset() const { return on ? "\033[0m" : ""; }
};

// One message cut out of the input, separators turned back into SOH.
struct Extracted {
  std::string prefix;  // text before "8=" on its line, trimmed
  std::string bytes;   // fields joined by SOH, each terminated by SOH
  const char* separator = "SOH";
  bool complete = false;  // ended with a CheckSum field
};

bool starts_message(std::string_view in, std::size_t p) {
  if (in.compare(p, 5, "8=FIX") != 0) return false;
  if (p == 0) return true;
  const char c = in[p - 1];
  return !(c >= '0' && c <= '9');  // not the tail of another tag such as "18="
}

// The separator right after BeginString's value, or empty when none is seen.
std::string_view detect_separator(std::string_view in, std::size_t start) {
  for (std::size_t i = start + 2; i < in.size() && i < start + 2 + 16; ++i) {
    if (in[i] == '\x01') return in.substr(i, 1);
    if (in[i] == '|') return in.substr(i, 1);
    if (in[i] == '^' && i + 1 < in.size() && in[i + 1] == 'A') return in.substr(i, 2);
    if (in[i] == '\n' || in[i] == '\r') break;
  }
  return {};
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// Extracts the message starting at `start`; returns the position to go on from.
std::size_t extract(std::string_view in, std::size_t start, std::size_t line_start, Extracted& out) {
  out = {};
  out.prefix = trim(in.substr(line_start, start - line_start));
  const std::string_view sep = detect_separator(in, start);
  if (sep == "|") out.separator = "'|'";
  if (sep == "^A") out.separator = "'^A'";
  std::size_t p = start;
  while (p < in.size()) {
    if (in[p] == '\n' || in[p] == '\r') break;
    if (p != start && starts_message(in, p)) break;
    std::size_t end = sep.empty() ? std::string_view::npos : in.find(sep, p);
    const std::size_t eol = in.find_first_of("\r\n", p);
    if (end == std::string_view::npos || (eol != std::string_view::npos && eol < end)) {
      // Last field without a separator: keep it and stop at the line's end.
      end = eol == std::string_view::npos ? in.size() : eol;
      out.bytes.append(in.substr(p, end - p));
      out.bytes.push_back(kSoh);
      out.complete = in.compare(p, 3, "10=") == 0;
      return end;
    }
    out.bytes.append(in.substr(p, end - p));
    out.bytes.push_back(kSoh);
    const bool checksum = in.compare(p, 3, "10=") == 0;
    p = end + sep.size();
    if (checksum) {
      out.complete = true;
      break;
    }
  }
  return p;
}

std::string printable(std::string_view v) {
  std::string s;
  for (const char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == kSoh) {
      s += "^A";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      s += buf;
    } else {
      s += c;
    }
  }
  return s;
}

class Printer {
 public:
  Printer(std::string dict_dir, bool validate, Style style)
      : dict_dir_(std::move(dict_dir)), validate_(validate), style_(style) {}

  // Prints every message found in `in`; returns how many were bad.
  int run(std::string_view in, const std::string& source) {
    int bad = 0;
    std::size_t line_start = 0;
    std::size_t p = 0;
    while (p < in.size()) {
      if (in[p] == '\n') {
        line_start = ++p;
        continue;
      }
      if (!starts_message(in, p)) {
        ++p;
        continue;
      }
      Extracted m;
      const std::size_t next = extract(in, p, line_start, m);
      ++count_;
      if (!print(m, source)) ++bad;
      p = next > p ? next : p + 1;
      line_start = p;
    }
    return bad;
  }

 private:
  const Dictionary* dictionary(std::string_view begin_string) {
    auto it = dicts_.find(std::string(begin_string));
    if (it == dicts_.end()) {
      DictionaryLoad d = Dictionary::load_for(dict_dir_, begin_string);
      if (!d) std::cerr << "kite-fixprint: " << d.error << " (printing without names)\n";
      it = dicts_.emplace(std::string(begin_string), std::move(d)).first;
    }
    return it->second.dictionary.get();
  }

  Validator* validator(const Dictionary& d) {
    auto it = validators_.find(&d);
    if (it == validators_.end()) it = validators_.emplace(&d, std::make_unique<Validator>(d)).first;
    return it->second.get();
  }

  void field_line(const FieldIndex& ix, std::uint32_t i, const Dictionary* d, int depth, std::int64_t mark,
                  const char* mark_text) {
    const FieldRef& f = ix[i];
    const std::string_view v = ix.value(f);
    const FieldDef* def = d != nullptr ? d->field(f.tag) : nullptr;
    std::string name = def != nullptr ? std::string(def->name) : "?";
    const std::string indent(static_cast<std::size_t>(2 + 2 * depth), ' ');
    char tagbuf[16];
    std::snprintf(tagbuf, sizeof tagbuf, "%5u", f.tag);
    std::cout << indent << style_.tag() << tagbuf << style_.reset() << "  " << style_.name() << name << style_.reset();
    const std::size_t width = 26;
    const std::size_t used = name.size() + 2 * static_cast<std::size_t>(depth);
    std::cout << std::string(used < width ? width - used : 1, ' ') << printable(v);
    if (def != nullptr && def->has_enums()) {
      std::string descs;
      auto describe = [&](std::string_view item) {
        const EnumValue* e = def->find_enum(item);
        if (!descs.empty()) descs += ' ';
        descs += e != nullptr ? std::string(e->description) : "?";
      };
      if (is_multiple_value(def->type)) {
        std::size_t s = 0;
        while (s <= v.size()) {
          std::size_t sp = v.find(' ', s);
          if (sp == std::string_view::npos) sp = v.size();
          describe(v.substr(s, sp - s));
          s = sp + 1;
        }
      } else {
        describe(v);
      }
      std::cout << "  " << style_.desc() << "(" << descs << ")" << style_.reset();
    }
    if (static_cast<std::int64_t>(i) == mark) std::cout << "  " << style_.bad() << "<< " << mark_text << style_.reset();
    std::cout << '\n';
  }

  // Fields [from, to) at one nesting level; groups recurse with their layout.
  void fields(const FieldIndex& ix, std::uint32_t from, std::uint32_t to, const Dictionary* d,
              std::string_view msg_type, const GroupDef* in_group, int depth, std::int64_t mark,
              const char* mark_text) {
    std::uint32_t i = from;
    while (i < to) {
      field_line(ix, i, d, depth, mark, mark_text);
      const GroupDef* g = nullptr;
      if (d != nullptr) g = in_group != nullptr ? in_group->group(ix[i].tag) : d->group(msg_type, ix[i].tag);
      if (g == nullptr) {
        ++i;
        continue;
      }
      const GroupView view(ix, i, *g);
      for (const GroupEntry e : view) fields(ix, e.begin(), e.end(), d, msg_type, g, depth + 1, mark, mark_text);
      const std::uint32_t end = view.end_pos();
      i = end > i ? end : i + 1;
    }
  }

  // Lists the raw fields of bytes that did not frame or index.
  void raw_fields(std::string_view bytes) {
    std::size_t p = 0;
    while (p < bytes.size()) {
      std::size_t e = bytes.find(kSoh, p);
      if (e == std::string_view::npos) e = bytes.size();
      std::cout << "    " << printable(bytes.substr(p, e - p)) << '\n';
      p = e + 1;
    }
  }

  bool print(const Extracted& m, const std::string& source) {
    std::cout << style_.title() << "== #" << count_;
    if (!m.prefix.empty()) std::cout << "  [" << m.prefix << "]";
    const std::string_view bytes = m.bytes;
    const FrameResult fr = frame(bytes, 1u << 20);
    if (fr.status != FrameStatus::complete) {
      const char* why = fr.status != FrameStatus::incomplete ? to_string(fr.error)
                        : m.complete                         ? "BodyLength (9) points past the CheckSum field"
                                     : "incomplete message: no CheckSum (10) before the end of the line";
      std::cout << style_.reset() << "  " << style_.bad() << "INVALID: " << why << style_.reset() << "  (" << source
                << ", separator " << m.separator << ")\n";
      raw_fields(bytes);
      std::cout << '\n';
      return false;
    }
    const std::string_view framed = bytes.substr(0, fr.size);
    const IndexResult ir = ix_.build(framed);
    if (!ir) {
      std::cout << style_.reset() << "  " << style_.bad() << "INVALID: " << to_string(ir.error) << " at byte "
                << ir.offset << style_.reset() << '\n';
      raw_fields(framed);
      std::cout << '\n';
      return false;
    }
    Header h;
    const HeaderResult hr = read_header(ix_, h);
    const Dictionary* d = dictionary(ix_.value_at(0));
    const MessageDef* md = d != nullptr && hr ? d->message(h.msg_type) : nullptr;
    if (hr) {
      std::cout << "  " << (md != nullptr ? md->name : std::string_view("?")) << " (35=" << h.msg_type << ")";
      if (h.msg_seq_num != 0) std::cout << "  seq " << h.msg_seq_num;
      std::cout << "  " << h.sender_comp_id << " -> " << h.target_comp_id;
    }
    std::cout << "  " << h.begin_string << style_.reset() << '\n';
    bool ok = true;
    std::int64_t mark = -1;
    const char* mark_text = "";
    if (!hr) {
      std::cout << "  " << style_.bad() << "INVALID header: " << to_string(hr.error) << style_.reset() << '\n';
      ok = false;
    } else if (validate_ && d != nullptr) {
      const ValidationResult r = validator(*d)->validate(ix_, h);
      if (!r) {
        std::cout << "  " << style_.bad() << "REJECT " << static_cast<int>(r.reason) << ": " << r.text << style_.reset()
                  << '\n';
        if (r.position < ix_.size()) {
          mark = r.position;
          mark_text = to_string(r.reason);
        }
        ok = false;
      }
    }
    fields(ix_, 0, ix_.size(), hr ? d : nullptr, h.msg_type, nullptr, 0, mark, mark_text);
    if (fr.size < bytes.size()) std::cout << "  (" << bytes.size() - fr.size << " bytes after CheckSum ignored)\n";
    std::cout << '\n';
    return ok;
  }

  std::string dict_dir_;
  bool validate_;
  Style style_;
  FieldIndex ix_{4096};
  int count_ = 0;
  std::map<std::string, DictionaryLoad> dicts_;
  std::map<const Dictionary*, std::unique_ptr<Validator>> validators_;
};

}  // namespace
}  // namespace kite::tools

int main(int argc, char** argv) {
  CLI::App app{
      "kite-fixprint: pretty-print FIX messages from logs, captures or raw streams.\n"
      "Fields may be separated by SOH, '|' or \"^A\"; text before 8= on a line is shown as a prefix.\n"
      "Exit status: 0 all messages valid, 1 some invalid (or rejected with --validate), 2 input error."};
  std::vector<std::string> files;
  std::string dict_dir = kite::util::dictionary_dir();
  bool validate = false;
  bool no_color = false;
  app.add_option("files", files, "Input files (default: stdin; '-' is stdin)");
  app.add_option("--dict-dir", dict_dir,
                 "Folder with FIX42.xml, FIX44.xml, FIXT11.xml, FIX50SP2.xml (default: $KITE_DICTIONARY_DIR, "
                 "else the installed share/kite/dictionaries, else the build's configured folder)");
  app.add_flag("--validate", validate, "Validate each message against its dictionary and show the first failure");
  app.add_flag("--no-color", no_color, "Plain text (colour is used only on a terminal)");
  CLI11_PARSE(app, argc, argv);

  kite::tools::Style style;
  style.on = !no_color && isatty(STDOUT_FILENO) != 0;
  kite::tools::Printer printer(dict_dir, validate, style);
  if (files.empty()) files.emplace_back("-");
  int bad = 0;
  for (const std::string& f : files) {
    std::string text;
    if (f == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      std::ifstream in(f, std::ios::binary);
      if (!in) {
        std::cerr << "kite-fixprint: cannot open " << f << '\n';
        return 2;
      }
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    bad += printer.run(text, f == "-" ? "stdin" : f);
  }
  return bad == 0 ? 0 : 1;
}
