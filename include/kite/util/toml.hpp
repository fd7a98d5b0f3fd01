// The one way Kite includes toml++. Every Kite file includes this header,
// never <toml++/toml.h> directly.
//
// Kite links Debian's shared libtomlplusplus (3.3, built as C++20 with
// exceptions). Its headers choose inline namespaces and declarations from
// configuration macros (TOML_HEADER_ONLY, TOML_SHARED_LIB, TOML_EXCEPTIONS,
// TOML_OPTIONAL_TYPE, TOML_ENABLE_*) and from feature-test macros
// (__cpp_lib_char8_t) seen at the point of inclusion. A translation unit that
// saw other values than the library's build would declare types and
// functions that the .so defines differently: an ODR violation. This header
// pins every such macro to the library's build, includes <version> first so
// the feature-test macros never depend on which headers came before (CLI11,
// the standard library, ...), and fails the build on a conflicting setting
// instead of letting it reach the loader.
#pragma once

#include <version>

#if defined(TOML_HEADER_ONLY) && TOML_HEADER_ONLY != 0
#error "Kite links the shared libtomlplusplus: TOML_HEADER_ONLY must be 0"
#endif
#if defined(TOML_SHARED_LIB) && TOML_SHARED_LIB != 1
#error "Kite links the shared libtomlplusplus: TOML_SHARED_LIB must be 1"
#endif
#if defined(TOML_EXCEPTIONS) && TOML_EXCEPTIONS != 1
#error "libtomlplusplus is built with exceptions: TOML_EXCEPTIONS must be 1"
#endif
#if defined(TOML_OPTIONAL_TYPE)
#error "libtomlplusplus is built with std::optional: TOML_OPTIONAL_TYPE must not be set"
#endif
#if defined(TOML_ABI_NAMESPACES) && TOML_ABI_NAMESPACES != 1
#error "libtomlplusplus is built with ABI namespaces: TOML_ABI_NAMESPACES must be 1"
#endif

#ifndef TOML_HEADER_ONLY
#define TOML_HEADER_ONLY 0
#endif
#ifndef TOML_SHARED_LIB
#define TOML_SHARED_LIB 1
#endif
#ifndef TOML_EXCEPTIONS
#define TOML_EXCEPTIONS 1
#endif
#ifndef TOML_ABI_NAMESPACES
#define TOML_ABI_NAMESPACES 1
#endif
#ifndef TOML_ENABLE_FLOAT16
#define TOML_ENABLE_FLOAT16 0
#endif
#ifndef TOML_ENABLE_UNRELEASED_FEATURES
#define TOML_ENABLE_UNRELEASED_FEATURES 0
#endif

#include <toml++/toml.h>

// The library exports the char8_t overloads (parse_file(std::u8string_view)):
// every Kite unit must declare them too, which toml++ does only when it sees
// char8_t support (decided from these feature-test macros, <version> above).
#if !defined(__cpp_char8_t) || !defined(__cpp_lib_char8_t) || __cpp_lib_char8_t < 201907
#error "toml++ must see char8_t support as the shared library was built (C++20)"
#endif
static_assert(TOML_LIB_MAJOR == 3, "Kite is written against toml++ 3");
