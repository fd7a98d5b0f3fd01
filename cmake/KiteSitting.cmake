# kite_sitting: what a lab sitting runs and nothing else (scripts/lab.sh builds
# it; the tests build in scripts/test.sh): bench-run, the client
# bench_roundtrip and the servers of the flavours in lab/flavours/*.toml that
# this tree builds. A sitting does not run a flavour's `build` command, so each
# one's target is here. Included after every add_subdirectory: the optional
# flavours (JDK, .NET SDK, cargo) exist as targets only where their tools do.
set(_kite_sitting_targets
  bench-run bench_roundtrip   # the lab and its client; cpp, quickfix and raw's server
  java-jni-server             # java-jni.toml
  kite_java_pure              # java-pure.toml
  kite_dotnet                 # dotnet-native.toml
  rust_pure                   # rust-pure.toml (cargo build)
  dotnet_pure                 # dotnet-pure.toml (dotnet publish)
)
# A flavour file that names a CMake target this list lacks would leave its
# cells unbuilt after scripts/lab.sh: stop at configure time instead.
file(GLOB _kite_flavour_files ${CMAKE_SOURCE_DIR}/lab/flavours/*.toml)
foreach(_file IN LISTS _kite_flavour_files)
  file(STRINGS ${_file} _build REGEX "^build *=.*\"--target\"")
  if(_build MATCHES "\"--target\", *\"([^\"]+)\"")
    if(NOT CMAKE_MATCH_1 IN_LIST _kite_sitting_targets)
      message(FATAL_ERROR "${_file} builds the target ${CMAKE_MATCH_1}, which kite_sitting "
                          "(cmake/KiteSitting.cmake) does not build: add it to the list there")
    endif()
  endif()
endforeach()
add_custom_target(kite_sitting)
foreach(_t IN LISTS _kite_sitting_targets)
  if(TARGET ${_t})
    add_dependencies(kite_sitting ${_t})
  endif()
endforeach()
