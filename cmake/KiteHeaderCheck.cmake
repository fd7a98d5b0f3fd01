# Every header compiles on its own: kite_header_check(NAME ROOT LIBS...)
# makes one generated source per header under ROOT/kite/ that includes only
# that header (twice, which checks its guard), built in ALL with Kite's
# warning flags and LIBS' include paths (toml++, nlohmann/json; no header
# includes QuickFIX). The library's headers (include/) are checked from the
# top CMakeLists.txt, the lab's and the bench's from their own folders.
function(kite_header_check name root)
  file(GLOB_RECURSE _headers CONFIGURE_DEPENDS RELATIVE ${root} ${root}/kite/*.hpp)
  set(_sources "")
  foreach(_header IN LISTS _headers)
    string(REGEX REPLACE "[/.]" "_" _stem "${_header}")
    set(_source ${CMAKE_CURRENT_BINARY_DIR}/header_check/${_stem}.cpp)
    file(CONFIGURE OUTPUT ${_source} CONTENT "#include \"${_header}\"\n#include \"${_header}\"\n")
    list(APPEND _sources ${_source})
  endforeach()
  add_library(${name} OBJECT ${_sources})
  target_link_libraries(${name} PRIVATE kite_flags ${ARGN})
endfunction()
