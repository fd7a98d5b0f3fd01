#include "kite/bench/thread.hpp"

#include <pthread.h>
#include <sched.h>

#include <cstring>
#include <stdexcept>

namespace kite::bench {

void name_this_thread(const char* name) noexcept {
  char buf[16];
  std::strncpy(buf, name, sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  pthread_setname_np(pthread_self(), buf);
}

bool pin_this_thread(int core) noexcept {
  if (core < 0) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

std::vector<int> parse_core_list(const std::string& list) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    const std::string item = list.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) continue;
    const std::size_t dash = item.find('-');
    try {
      if (dash == std::string::npos) {
        out.push_back(std::stoi(item));
      } else {
        const int a = std::stoi(item.substr(0, dash)), b = std::stoi(item.substr(dash + 1));
        if (b < a) throw std::invalid_argument("range");
        for (int c = a; c <= b; ++c) out.push_back(c);
      }
    } catch (const std::exception&) {
      throw std::invalid_argument("bad core list: " + list);
    }
  }
  for (int c : out)
    if (c < 0) throw std::invalid_argument("bad core list: " + list);
  return out;
}

}  // namespace kite::bench
