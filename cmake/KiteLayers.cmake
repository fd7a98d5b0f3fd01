# The layers' include direction (scripts/check-layers.py) is checked in every
# build: an include of a higher layer fails `cmake --build` with file:line.
# It runs again when a header or source under include/ or src/ changes.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
file(GLOB_RECURSE _kite_layered CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/include/kite/*.hpp ${CMAKE_SOURCE_DIR}/src/*.hpp ${CMAKE_SOURCE_DIR}/src/*.h
  ${CMAKE_SOURCE_DIR}/src/*.cpp ${CMAKE_SOURCE_DIR}/src/*.cc)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/layers.checked
  COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/scripts/check-layers.py ${CMAKE_SOURCE_DIR}
  COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/layers.checked
  DEPENDS ${CMAKE_SOURCE_DIR}/scripts/check-layers.py ${_kite_layered}
  COMMENT "Checking that no include points up the layers")
add_custom_target(kite_layer_check ALL DEPENDS ${CMAKE_BINARY_DIR}/layers.checked)
