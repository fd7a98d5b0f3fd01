// kite.h compiles as C++ (twice: its guard) and declares C linkage.
#include "kite/kite.h"

static_assert(sizeof(kite_field) == 12);
extern "C" const char* kite_version(void);  // same linkage: a redeclaration, not an overload
