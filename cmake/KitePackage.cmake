# Kite as a library others install and build against: `cmake --install`
# (programs, dictionaries, libraries, public headers, the CMake package Kite,
# kite.pc) and CPack's Debian packages (kite: runtime, kite-dev: the rest).
# Included at the end of the top CMakeLists.txt, after every part exists.
#
# Versions: the project() VERSION of the top CMakeLists.txt, semantic
# (docs/packaging.md). It names the packages, the library's soname, the
# CMake package's version and kite.pc's.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# --- The dependencies of the installed library: the one list ----------------
# Every third-party target a library part links must be named here (configure
# fails otherwise), with how a user's build finds it again:
#   TARGETS  the imported targets the parts link
#   FIND     the lines KiteConfig.cmake runs to make those targets
#   PC       pkg-config modules for kite.pc (Requires.private, or Requires when PUBLIC)
#   LIBS     linker flags for kite.pc's Libs.private (where there is no .pc)
#   DEB      the Debian package with its development files (kite-dev depends on it)
#   PUBLIC   the public headers include it: users compile against it too
# Only the entries whose targets the library links this build are used (the
# options KITE_WITH_TLS and KITE_WITH_URING drop theirs).
set(_kite_dep_names "")
function(kite_package_dependency name)
  cmake_parse_arguments(D "PUBLIC" "FIND;PC;LIBS;DEB" "TARGETS" ${ARGN})
  if(NOT D_TARGETS OR NOT D_FIND)
    message(FATAL_ERROR "kite_package_dependency(${name}): TARGETS and FIND are required")
  endif()
  foreach(_k TARGETS FIND PC LIBS DEB PUBLIC)
    set(KITE_DEP_${name}_${_k} "${D_${_k}}" PARENT_SCOPE)
  endforeach()
  set(_kite_dep_names ${_kite_dep_names} ${name} PARENT_SCOPE)
endfunction()

kite_package_dependency(Threads TARGETS Threads::Threads
  FIND "find_dependency(Threads)" LIBS "-pthread")
kite_package_dependency(tomlplusplus PUBLIC TARGETS PkgConfig::TOMLPP
  FIND "find_dependency(PkgConfig)\nif(NOT TARGET PkgConfig::TOMLPP)\n  pkg_check_modules(TOMLPP REQUIRED IMPORTED_TARGET tomlplusplus)\nendif()"
  PC tomlplusplus DEB libtomlplusplus-dev)
kite_package_dependency(pugixml TARGETS pugixml::pugixml
  FIND "find_dependency(pugixml)" PC pugixml DEB libpugixml-dev)
kite_package_dependency(date TARGETS date::date-tz
  FIND "find_dependency(date)" LIBS "-ldate-tz" DEB libhowardhinnant-date-dev)
kite_package_dependency(OpenSSL TARGETS OpenSSL::SSL OpenSSL::Crypto
  FIND "find_dependency(OpenSSL 1.1.1 COMPONENTS SSL Crypto)" PC "libssl libcrypto" DEB libssl-dev)
kite_package_dependency(liburing TARGETS PkgConfig::URING
  FIND "find_dependency(PkgConfig)\nif(NOT TARGET PkgConfig::URING)\n  pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)\nendif()"
  PC liburing DEB liburing-dev)
kite_package_dependency(PostgreSQL TARGETS PostgreSQL::PostgreSQL
  FIND "find_dependency(PostgreSQL)" LIBS "-lpq" DEB libpq-dev)  # libpq.pc's static list names archives Debian lacks

# --- The library: libkitecpp, the C++ API -------------------------------------
# One library of every part under the programs (util to app), built from the
# position-independent objects src/capi compiles for libkite.so. libkite.so
# itself stays the C API alone (kite.h: only kite_* exported, its own soname);
# the C++ API needs every symbol, hence its own name: libkitecpp.so and
# libkitecpp.a. Kite::kite is the shared one, or the static one when the user
# sets Kite_USE_STATIC before find_package(Kite).
set(_kite_parts kite_util kite_codec kite_session kite_transport kite_engine kite_link kite_app)
set(_kite_objects "")
set(_kite_links "")
set(_kite_defs "")
foreach(_part IN LISTS _kite_parts)
  list(APPEND _kite_objects $<TARGET_OBJECTS:${_part}_pic>)
  foreach(_prop LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
    get_target_property(_l ${_part} ${_prop})
    if(_l)
      list(APPEND _kite_links ${_l})
    endif()
  endforeach()
  get_target_property(_d ${_part} INTERFACE_COMPILE_DEFINITIONS)
  if(_d)
    list(APPEND _kite_defs ${_d})
  endif()
endforeach()
if(TARGET kite_codec_levels_pic)
  list(APPEND _kite_objects $<TARGET_OBJECTS:kite_codec_levels_pic>)
endif()
list(TRANSFORM _kite_links REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1")
# A new part under these (a kite_* library one of them links) belongs in the
# list above and in src/capi's.
set(_kite_inner ${_kite_links})
list(FILTER _kite_inner INCLUDE REGEX "^kite_")
list(REMOVE_ITEM _kite_inner kite_flags ${_kite_parts})
if(_kite_inner)
  message(FATAL_ERROR "The library parts link ${_kite_inner}, which libkitecpp does not hold: add it to "
                      "_kite_parts in cmake/KitePackage.cmake (and to the parts of src/capi/CMakeLists.txt)")
endif()
list(FILTER _kite_links EXCLUDE REGEX "^kite_")
list(REMOVE_DUPLICATES _kite_links)

# Which entries of the list this build uses; a linked target without one stops configure.
set(_kite_used_deps "")
foreach(_l IN LISTS _kite_links)
  set(_owner "")
  foreach(_n IN LISTS _kite_dep_names)
    if(_l IN_LIST KITE_DEP_${_n}_TARGETS)
      set(_owner ${_n})
    endif()
  endforeach()
  if(NOT _owner)
    message(FATAL_ERROR "A part of libkitecpp links ${_l}, which the dependency list of cmake/KitePackage.cmake "
                        "does not name: add a kite_package_dependency() for it there")
  endif()
  list(APPEND _kite_used_deps ${_owner})
endforeach()
list(REMOVE_DUPLICATES _kite_used_deps)

# The soname: MAJOR from 1.0 on; 0.MINOR before, where a minor release may
# break the interface (docs/packaging.md, "Versions").
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(KITE_SOVERSION 0.${PROJECT_VERSION_MINOR})
  set(_kite_compat SameMinorVersion)
else()
  set(KITE_SOVERSION ${PROJECT_VERSION_MAJOR})
  set(_kite_compat SameMajorVersion)
endif()

add_library(kitecpp SHARED ${_kite_objects})
add_library(kitecpp_static STATIC ${_kite_objects})
set_target_properties(kitecpp PROPERTIES OUTPUT_NAME kitecpp EXPORT_NAME kite_shared
  VERSION ${PROJECT_VERSION} SOVERSION ${KITE_SOVERSION} LINKER_LANGUAGE CXX)
set_target_properties(kitecpp_static PROPERTIES OUTPUT_NAME kitecpp EXPORT_NAME kite_static
  LINKER_LANGUAGE CXX)
target_link_options(kitecpp PRIVATE -Wl,--no-undefined)
foreach(_t kitecpp kitecpp_static)
  target_include_directories(${_t} INTERFACE $<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>
                                             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${_t} INTERFACE cxx_std_20)
  if(_kite_defs)
    target_compile_definitions(${_t} INTERFACE ${_kite_defs})
  endif()
endforeach()
foreach(_n IN LISTS _kite_used_deps)
  foreach(_l IN LISTS KITE_DEP_${_n}_TARGETS)
    if(_l IN_LIST _kite_links)
      target_link_libraries(kitecpp_static PUBLIC ${_l})
      if(KITE_DEP_${_n}_PUBLIC)
        target_link_libraries(kitecpp PUBLIC ${_l})
      else()
        target_link_libraries(kitecpp PRIVATE ${_l})
      endif()
    endif()
  endforeach()
endforeach()

# libkite.so, the C API, in the package too (Kite::capi), for C users.
set_target_properties(kite PROPERTIES EXPORT_NAME capi)
target_include_directories(kite INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)

# --- Install -------------------------------------------------------------------
# Components: runtime (programs, dictionaries, the shared libraries) and dev
# (headers, static library, the libraries' links, CMake package, kite.pc).
# The programs in bin/, the dictionaries with their licence in
# share/kite/dictionaries: the paths util::dictionary_dir() looks for from
# the executable's folder, hence not GNUInstallDirs' configurable ones.
install(TARGETS kite-acceptor kite-initiator kite-admin kite-fixprint kite-demo kite-store bench_roundtrip bench-run
  RUNTIME DESTINATION bin COMPONENT runtime)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/dictionaries/ DESTINATION share/kite/dictionaries COMPONENT runtime)
# LICENSE.quickfix: the notice of the dictionaries and of the table derived
# from them (include/kite/codec/data_pairs.hpp).
install(FILES ${CMAKE_SOURCE_DIR}/CHANGELOG.md ${CMAKE_SOURCE_DIR}/LICENSE.quickfix DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT runtime)

install(TARGETS kitecpp kitecpp_static kite EXPORT KiteTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
# install(TARGETS) strips programs and shared libraries only (cmake --install
# --strip, CPack): the archive loses its debug sections too.
install(CODE "if(CMAKE_INSTALL_DO_STRIP)
  execute_process(COMMAND \"${CMAKE_STRIP}\" --strip-debug
    \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/$<TARGET_FILE_NAME:kitecpp_static>\")
endif()" COMPONENT dev)
# The public headers: include/ holds the library's alone (the lab's and the
# bench's live in lab/include and bench/include).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/kite DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

set(_kite_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Kite)
install(EXPORT KiteTargets NAMESPACE Kite:: DESTINATION ${_kite_cmake_dir} COMPONENT dev)
set(KITE_FIND_DEPENDENCIES "")
set(_pc_requires "")
set(_pc_requires_private "")
set(_pc_libs_private "")
set(_deb_dev_depends "")
foreach(_n IN LISTS _kite_used_deps)
  string(APPEND KITE_FIND_DEPENDENCIES "${KITE_DEP_${_n}_FIND}\n")
  if(KITE_DEP_${_n}_PC AND KITE_DEP_${_n}_PUBLIC)
    list(APPEND _pc_requires ${KITE_DEP_${_n}_PC})
  elseif(KITE_DEP_${_n}_PC)
    list(APPEND _pc_requires_private ${KITE_DEP_${_n}_PC})
  endif()
  if(KITE_DEP_${_n}_LIBS)
    list(APPEND _pc_libs_private ${KITE_DEP_${_n}_LIBS})
  endif()
  if(KITE_DEP_${_n}_DEB)
    list(APPEND _deb_dev_depends ${KITE_DEP_${_n}_DEB})
  endif()
endforeach()
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/KiteConfig.cmake.in
  ${CMAKE_BINARY_DIR}/package/KiteConfig.cmake INSTALL_DESTINATION ${_kite_cmake_dir})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/package/KiteConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_kite_compat})
install(FILES ${CMAKE_BINARY_DIR}/package/KiteConfig.cmake ${CMAKE_BINARY_DIR}/package/KiteConfigVersion.cmake
  DESTINATION ${_kite_cmake_dir} COMPONENT dev)

list(JOIN _pc_requires " " KITE_PC_REQUIRES)
list(JOIN _pc_requires_private " " KITE_PC_REQUIRES_PRIVATE)
list(JOIN _pc_libs_private " " KITE_PC_LIBS_PRIVATE)
# The prefix relative to the .pc file's own folder: right wherever the tree
# is installed (cmake --install --prefix, CPack's /usr, an extracted .deb).
file(RELATIVE_PATH KITE_PC_UP /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
string(REGEX REPLACE "/$" "" KITE_PC_UP "${KITE_PC_UP}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/kite.pc.in ${CMAKE_BINARY_DIR}/package/kite.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/package/kite.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

# --- CPack: kite_<version>_amd64.deb and kite-dev_<version>_amd64.deb ----------
set(CPACK_PACKAGE_NAME kite)
set(CPACK_PACKAGE_VENDOR "Kite")
set(CPACK_PACKAGE_CONTACT "Kite maintainers <kite@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)   # the build keeps -g; the packages do not
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)             # runtime Depends from dpkg-shlibdeps
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)       # shlibs for libkitecpp and libkite
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)      # kite-dev depends on kite (= version)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME kite)
# The first line of a description is the package's synopsis (Debian policy).
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION "Low-latency FIX order-entry engine
The kite-acceptor and kite-initiator daemons, kite-admin, kite-fixprint,
kite-store, kite-demo, the latency lab (bench-run, bench_roundtrip), the FIX
data dictionaries, libkitecpp (the C++ API) and libkite (the C API).")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME kite-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION "Low-latency FIX order-entry engine: development files
The public headers, the static libkitecpp.a, the CMake package Kite
(find_package(Kite)) and the pkg-config file kite.pc.")
list(JOIN _deb_dev_depends ", " CPACK_DEBIAN_DEV_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF)
include(CPack)
