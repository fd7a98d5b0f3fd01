# The parts' dependencies (cmake/layers.toml, scripts/check-layers.py) are
# checked in every build, on the include text and on the targets' links and
# include paths: a dependency the declaration does not allow fails
# `cmake --build` with file:line or the target's name.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# The targets come from CMake's file API (the codemodel). A query is read when
# cmake starts, so the configure that writes it gets no reply: that one also
# gives the build a configure input dated in the future, which makes the
# build configure once more (with the query) before it builds anything.
set(_kite_query ${CMAKE_BINARY_DIR}/.cmake/api/v1/query/client-kite/codemodel-v2)
file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/layers)
if(NOT EXISTS ${_kite_query})
  file(WRITE ${_kite_query} "")
  execute_process(COMMAND touch -d "+1 hour" ${CMAKE_BINARY_DIR}/layers/codemodel-asked)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_BINARY_DIR}/layers/codemodel-asked)
endif()
# Touched by every configure: the targets may have changed.
file(TOUCH ${CMAKE_BINARY_DIR}/layers/configured)

file(GLOB_RECURSE _kite_layered CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/include/*.h ${CMAKE_SOURCE_DIR}/include/*.hpp
  ${CMAKE_SOURCE_DIR}/src/*.h ${CMAKE_SOURCE_DIR}/src/*.hpp ${CMAKE_SOURCE_DIR}/src/*.cpp ${CMAKE_SOURCE_DIR}/src/*.cc
  ${CMAKE_SOURCE_DIR}/bench/*.hpp ${CMAKE_SOURCE_DIR}/bench/*.cpp
  ${CMAKE_SOURCE_DIR}/lab/include/*.hpp ${CMAKE_SOURCE_DIR}/lab/src/*.hpp ${CMAKE_SOURCE_DIR}/lab/src/*.cpp
  ${CMAKE_SOURCE_DIR}/lab/app/*.cpp
  ${CMAKE_SOURCE_DIR}/tests/*.h ${CMAKE_SOURCE_DIR}/tests/*.hpp ${CMAKE_SOURCE_DIR}/tests/*.c ${CMAKE_SOURCE_DIR}/tests/*.cpp
  ${CMAKE_SOURCE_DIR}/bindings/*.c ${CMAKE_SOURCE_DIR}/examples/*.cpp)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/layers/checked
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/check-layers.py --build ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/layers/checked
  DEPENDS ${CMAKE_SOURCE_DIR}/scripts/check-layers.py ${CMAKE_SOURCE_DIR}/cmake/layers.toml
          ${CMAKE_BINARY_DIR}/layers/configured ${_kite_layered}
  COMMENT "Checking the parts' includes and links against cmake/layers.toml")
add_custom_target(kite_layer_check ALL DEPENDS ${CMAKE_BINARY_DIR}/layers/checked)
