// kite-store: inspects session journals without changing them.
//
//   kite-store list DIR [--session ID]
//
// prints, for each journal in DIR (or the one of session ID, e.g.
// "FIX.4.4:KITE->PEER"), its numbers and every stored message on one line,
// "<seq> 8=FIX.4.4|9=...|10=123|", fields separated by '|'. Piped into
// kite-fixprint, each message is printed field by field with names:
//   kite-store list store | kite-fixprint
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "kite/codec/values.hpp"
#include "kite/session/store.hpp"

namespace {

namespace fs = std::filesystem;

void print_journal(const fs::path& path) {
  std::string line;
  const kite::session::JournalSummary s =
      kite::session::read_journal(path.string(), [&](std::uint64_t seq, std::string_view msg) {
        line.assign(std::to_string(seq));
        line += ' ';
        for (char c : msg) line += c == '\x01' ? '|' : c;
        std::printf("%s\n", line.c_str());
      });
  char created[32] = "-";
  if (s.creation_ns > 0)
    *kite::codec::write_utc_timestamp(created, s.creation_ns, kite::codec::TimePrecision::seconds) = 0;
  std::printf("# %s: next sender seq %llu, next target seq %llu, %zu messages, period since %s, generation %u\n",
              path.filename().c_str(), static_cast<unsigned long long>(s.next_sender_seq),
              static_cast<unsigned long long>(s.next_target_seq), s.messages, created, s.generation);
  if (s.unfinished != 0)
    std::printf(
        "# %s: %zu messages of an inbound message still being handled (not listed; dropped if the process "
        "died)\n",
        path.filename().c_str(), s.unfinished);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kite-store: list the messages in Kite session journals"};
  app.require_subcommand(1);
  std::string dir;
  std::string session;
  CLI::App* list = app.add_subcommand("list", "print every stored message of each journal in DIR");
  list->add_option("DIR", dir, "the store folder (FileStorePath)")->required();
  list->add_option("--session", session, "only this session, e.g. FIX.4.4:KITE->PEER");
  CLI11_PARSE(app, argc, argv);

  try {
    std::vector<fs::path> journals;
    if (!session.empty()) {
      journals.push_back(fs::path(dir) / (kite::session::FileStore::file_name_for(session) + ".journal"));
      if (!fs::exists(journals.back())) {
        std::fprintf(stderr, "kite-store: no journal for session %s in %s\n", session.c_str(), dir.c_str());
        return 1;
      }
    } else {
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".journal") journals.push_back(e.path());
      std::sort(journals.begin(), journals.end());
    }
    for (const auto& j : journals) print_journal(j);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kite-store: %s\n", e.what());
    return 1;
  }
  return 0;
}
