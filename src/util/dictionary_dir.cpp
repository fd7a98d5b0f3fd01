#include "kite/util/dictionary_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef KITE_DEFAULT_DICTIONARY_DIR
#error "KITE_DEFAULT_DICTIONARY_DIR is set by src/util/CMakeLists.txt"
#endif

namespace kite::util {

namespace fs = std::filesystem;

std::string executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path().string() : exe.parent_path().string();
}

std::string dictionary_dir() {
  if (const char* env = std::getenv("KITE_DICTIONARY_DIR"); env != nullptr && *env != '\0') return env;
  const fs::path installed = (fs::path(executable_dir()) / ".." / "share" / "kite" / "dictionaries").lexically_normal();
  std::error_code ec;
  if (fs::is_directory(installed, ec)) return installed.string();
  return KITE_DEFAULT_DICTIONARY_DIR;
}

}  // namespace kite::util
