// Where a Kite program finds the FIX data dictionaries (FIX42.xml, FIX44.xml,
// FIXT11.xml, FIX50SP2.xml, ...) when it is not told.
#pragma once

#include <string>

namespace kite::util {

// The folder of the running executable (from /proc/self/exe); the working
// directory when that cannot be read.
std::string executable_dir();

// The dictionaries' folder for a program given none: $KITE_DICTIONARY_DIR
// when set; else <executable_dir>/../share/kite/dictionaries when that folder
// exists (an installed tree, `cmake --install`); else the folder configured
// at build time (the KITE_DICTIONARY_DIR cache option: the repository's
// dictionaries/ by default). An explicit choice (--dict-dir, a session's
// DataDictionary) goes before it. The folder's content is not checked here:
// the loader reports a missing file.
std::string dictionary_dir();

}  // namespace kite::util
