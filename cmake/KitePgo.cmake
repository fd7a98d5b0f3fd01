# Profile-guided optimisation of the engine and the lab's C++ servers
# (KITE_PGO, on in the release presets; docs/engine.md, "Profile-guided
# build"). The build makes a training copy of itself in <build>/pgo/train with
# -fprofile-generate (target bench_roundtrip only), runs it through the lab's
# cells (cmake/pgo_train.sh) and compiles the targets of kite_pgo_use() with
# those counts: GCC then lays out each function's taken path in straight lines
# and its untaken blocks in .text.unlikely, so an order runs through fewer
# code lines. -fprofile-partial-training keeps what the training did not run
# (paths no cell takes: error answers, stores, the tools' parts of the
# libraries) compiled as without a profile rather than for size.
#
# The training copy is configured with KITE_PGO_GENERATE=<profile dir>. Both
# builds strip their own folder from the counts' file names
# (-fprofile-prefix-path), so an object of the training copy and its twin
# here share one .gcda.
option(KITE_PGO "GCC release builds: profile-guided optimisation from a training run of the lab's cells" OFF)
set(KITE_PGO_GENERATE "" CACHE PATH "Internal: the training copy's profile folder (set by a KITE_PGO build)")
mark_as_advanced(KITE_PGO_GENERATE)

set(KITE_PGO_ACTIVE OFF)
if(KITE_PGO_GENERATE)
  add_compile_options(-fprofile-generate=${KITE_PGO_GENERATE} -fprofile-update=prefer-atomic
                      -fprofile-prefix-path=${CMAKE_BINARY_DIR})
  add_link_options(-fprofile-generate=${KITE_PGO_GENERATE})
elseif(KITE_PGO)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR NOT _kite_bt MATCHES "^(RELEASE|RELWITHDEBINFO)$")
    message(STATUS "kite: KITE_PGO is for GCC release builds: off in this one")
  elseif(KITE_SANITIZE OR KITE_FUZZ)
    message(STATUS "kite: KITE_PGO is off with KITE_SANITIZE or KITE_FUZZ")
  else()
    set(KITE_PGO_ACTIVE ON)
  endif()
endif()

if(KITE_PGO_ACTIVE)
  include(ExternalProject)
  set(KITE_PGO_DIR ${CMAKE_BINARY_DIR}/pgo)
  set(KITE_PGO_PROFILE ${KITE_PGO_DIR}/profile)
  set(KITE_PGO_STAMP ${KITE_PGO_DIR}/trained)
  # The training copy takes every option that changes what its objects hold.
  set(_kite_pgo_args
    -DCMAKE_BUILD_TYPE:STRING=${CMAKE_BUILD_TYPE}
    -DCMAKE_CXX_FLAGS:STRING=${CMAKE_CXX_FLAGS}
    -DCMAKE_CXX_FLAGS_${_kite_bt}:STRING=${CMAKE_CXX_FLAGS_${_kite_bt}}
    -DCMAKE_C_FLAGS_${_kite_bt}:STRING=${CMAKE_C_FLAGS_${_kite_bt}}
    -DCMAKE_CXX_COMPILER:FILEPATH=${CMAKE_CXX_COMPILER}
    -DCMAKE_C_COMPILER:FILEPATH=${CMAKE_C_COMPILER}
    -DKITE_PGO:BOOL=OFF
    -DKITE_PGO_GENERATE:PATH=${KITE_PGO_PROFILE}
    -DKITE_NATIVE:BOOL=${KITE_NATIVE}
    -DKITE_SCHEDULE:BOOL=${KITE_SCHEDULE}
    -DKITE_QUICKFIX:BOOL=${KITE_QUICKFIX}
    -DKITE_WITH_URING:BOOL=${KITE_WITH_URING}
    -DKITE_WITH_TLS:BOOL=${KITE_WITH_TLS}
    -DKITE_WITH_POSTGRESQL:BOOL=${KITE_WITH_POSTGRESQL}
    -DKITE_WITH_TCPDIRECT:BOOL=${KITE_WITH_TCPDIRECT}
    -DKITE_WITH_SOCKETXTREME:BOOL=${KITE_WITH_SOCKETXTREME}
    -DKITE_DICTIONARY_DIR:PATH=${KITE_DICTIONARY_DIR})
  if(CMAKE_CXX_COMPILER_LAUNCHER)
    list(APPEND _kite_pgo_args -DCMAKE_CXX_COMPILER_LAUNCHER:STRING=${CMAKE_CXX_COMPILER_LAUNCHER})
  endif()
  ExternalProject_Add(kite_pgo_train
    SOURCE_DIR ${CMAKE_SOURCE_DIR}
    BINARY_DIR ${KITE_PGO_DIR}/train
    STAMP_DIR ${KITE_PGO_DIR}/stamp
    TMP_DIR ${KITE_PGO_DIR}/tmp
    CMAKE_GENERATOR ${CMAKE_GENERATOR}
    CMAKE_CACHE_ARGS ${_kite_pgo_args}
    # Built and trained in one step, so that the stamp is that step's
    # by-product: unchanged (training skipped), it rebuilds nothing here.
    BUILD_COMMAND ${CMAKE_COMMAND} --build <BINARY_DIR> --target bench_roundtrip
          COMMAND ${CMAKE_SOURCE_DIR}/cmake/pgo_train.sh <BINARY_DIR>/bench_roundtrip ${KITE_PGO_PROFILE} ${KITE_PGO_STAMP}
    BUILD_BYPRODUCTS ${KITE_PGO_STAMP}
    BUILD_ALWAYS ON
    INSTALL_COMMAND "")
  string(APPEND KITE_BUILD_FLAGS " -fprofile-use (KITE_PGO)")
endif()

# kite_pgo_use(TARGET...): compile these with the training's counts. Their
# objects are rebuilt whenever a training changes the counts.
function(kite_pgo_use)
  if(NOT KITE_PGO_ACTIVE)
    return()
  endif()
  foreach(_t IN LISTS ARGN)
    if(NOT TARGET ${_t})
      continue()
    endif()
    target_compile_options(${_t} PRIVATE -fprofile-use=${KITE_PGO_PROFILE} -fprofile-partial-training
                           -fprofile-prefix-path=${CMAKE_BINARY_DIR} -Wno-missing-profile)
    add_dependencies(${_t} kite_pgo_train)
    get_target_property(_dir ${_t} SOURCE_DIR)
    get_target_property(_sources ${_t} SOURCES)
    foreach(_s IN LISTS _sources)
      if(_s MATCHES "\\.(cpp|cc|c)$")
        if(NOT IS_ABSOLUTE ${_s})
          set(_s ${_dir}/${_s})
        endif()
        set_property(SOURCE ${_s} TARGET_DIRECTORY ${_t} APPEND PROPERTY OBJECT_DEPENDS ${KITE_PGO_STAMP})
      endif()
    endforeach()
  endforeach()
endfunction()
