# Compiler flags shared by Kite's own targets. Third-party headers that do not
# build cleanly (QuickFIX) are kept in targets that do not use these.
add_library(kite_flags INTERFACE)
target_compile_options(kite_flags INTERFACE -Wall -Wextra -Wpedantic -Werror)
# The public headers only: a part's private headers (src/<part>) are seen by
# that part's own targets alone, through their own include directories.
target_include_directories(kite_flags INTERFACE ${CMAKE_SOURCE_DIR}/include)

set(KITE_ARCH_FLAGS "")
if(KITE_NATIVE)
  set(KITE_ARCH_FLAGS "-march=native")
endif()
if(KITE_ARCH_FLAGS)
  add_compile_options(${KITE_ARCH_FLAGS})
endif()

# GCC's first instruction scheduling pass (before register allocation, off
# by default on x86-64), weighing register pressure: it lets the codec's
# index and reads overlap better (docs/codec.md, "Build flags"). Release
# builds with GCC only (clang does not take these flags); -DKITE_SCHEDULE=OFF
# leaves GCC's defaults.
option(KITE_SCHEDULE "GCC release builds: -fschedule-insns -fsched-pressure (recorded in the lab's stamp)" ON)
string(TOUPPER "${CMAKE_BUILD_TYPE}" _kite_bt)
set(KITE_SCHEDULE_FLAGS "")
if(KITE_SCHEDULE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND _kite_bt MATCHES "^(RELEASE|RELWITHDEBINFO)$")
  set(KITE_SCHEDULE_FLAGS -fschedule-insns -fsched-pressure --param=sched-pressure-algorithm=2)
  add_compile_options(${KITE_SCHEDULE_FLAGS})
endif()

if(KITE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# The flags that describe this build, written into binaries for the lab's stamp.
list(JOIN KITE_SCHEDULE_FLAGS " " _kite_schedule)
set(KITE_BUILD_FLAGS "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${_kite_bt}} ${KITE_ARCH_FLAGS} ${_kite_schedule}")
string(STRIP "${KITE_BUILD_FLAGS}" KITE_BUILD_FLAGS)
set(KITE_COMPILER "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")

# kite_test(NAME SOURCES... LIBS ... LABELS ...): a GoogleTest binary registered with ctest.
function(kite_test name)
  cmake_parse_arguments(KT "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${KT_SOURCES})
  target_link_libraries(${name} PRIVATE kite_flags ${KT_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  # Every test sees tests/ (support/*.hpp); the parts and tools never do.
  target_include_directories(${name} PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  if(NOT KT_LABELS)
    set(KT_LABELS unit)
  endif()
  list(APPEND KT_LABELS ${KITE_TEST_DIR_LABELS})  # a folder's labels for all its tests (tests/lab: tool)
  # The sanitizer build makes the unit tests of the library, not of the tools.
  if("unit" IN_LIST KT_LABELS AND NOT "tool" IN_LIST KT_LABELS)
    set_property(GLOBAL APPEND PROPERTY KITE_UNIT_TESTS ${name})
  endif()
  add_test(NAME ${name} COMMAND ${name} --gtest_brief=1)
  set_tests_properties(${name} PROPERTIES LABELS "${KT_LABELS}" TIMEOUT 300
    ENVIRONMENT "KITE_DICTIONARY_DIR=${KITE_DICTIONARY_DIR};KITE_SOURCE_DIR=${CMAKE_SOURCE_DIR};KITE_BINARY_DIR=${CMAKE_BINARY_DIR}")
endfunction()
