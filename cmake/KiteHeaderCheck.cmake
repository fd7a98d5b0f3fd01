# Every public header compiles on its own: one generated source per header
# under include/kite/ includes only that header (twice, which checks its
# guard), built in ALL with Kite's warning flags. The third-party headers
# some include (toml++, nlohmann/json) come with their targets' include
# paths; no public header includes QuickFIX.
file(GLOB_RECURSE _kite_public_headers CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}/include
     ${CMAKE_SOURCE_DIR}/include/kite/*.hpp)
set(_kite_header_sources "")
foreach(_header IN LISTS _kite_public_headers)
  string(REGEX REPLACE "[/.]" "_" _stem "${_header}")
  set(_source ${CMAKE_BINARY_DIR}/header_check/${_stem}.cpp)
  file(CONFIGURE OUTPUT ${_source} CONTENT "#include \"${_header}\"\n#include \"${_header}\"\n")
  list(APPEND _kite_header_sources ${_source})
endforeach()
add_library(kite_header_check OBJECT ${_kite_header_sources})
target_link_libraries(kite_header_check PRIVATE kite_flags PkgConfig::TOMLPP nlohmann_json::nlohmann_json)
