# Session interop with QuickFIX (label interop) and the kill -9 crash test
# (label integration): included from tests/interop/CMakeLists.txt.
if(KITE_QUICKFIX)
  # The QuickFIX side as a process of its own: gnu++14, without Kite's -Werror.
  add_executable(kite_qf_peer ${CMAKE_CURRENT_LIST_DIR}/session_qf_peer.cpp)
  set_target_properties(kite_qf_peer PROPERTIES CXX_STANDARD 14 CXX_EXTENSIONS ON)
  target_link_libraries(kite_qf_peer PRIVATE PkgConfig::QUICKFIX Threads::Threads)
  target_compile_definitions(kite_qf_peer PRIVATE KITE_DICTIONARY_DIR="${CMAKE_SOURCE_DIR}/dictionaries")

  kite_test(session_interop_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/session_interop_test.cpp
            LIBS kite_link LABELS interop)
  target_compile_definitions(session_interop_test PRIVATE
    KITE_ACCEPTOR_BIN="$<TARGET_FILE:kite-acceptor>" KITE_QF_PEER_BIN="$<TARGET_FILE:kite_qf_peer>")
  add_dependencies(session_interop_test kite-acceptor kite_qf_peer)
endif()

if(KITE_QUICKFIX)
  kite_test(session_crash_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/session_crash_test.cpp LABELS integration)
  target_compile_definitions(session_crash_test PRIVATE
    KITE_ACCEPTOR_BIN="$<TARGET_FILE:kite-acceptor>" KITE_QF_PEER_BIN="$<TARGET_FILE:kite_qf_peer>"
    KITE_STORE_BIN="$<TARGET_FILE:kite-store>")
  add_dependencies(session_crash_test kite-acceptor kite_qf_peer kite-store)
endif()

if(KITE_QUICKFIX)
  kite_test(admin_interop_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/admin_interop_test.cpp LABELS interop)
  target_compile_definitions(admin_interop_test PRIVATE
    KITE_ACCEPTOR_BIN="$<TARGET_FILE:kite-acceptor>" KITE_QF_PEER_BIN="$<TARGET_FILE:kite_qf_peer>"
    KITE_ADMIN_BIN="$<TARGET_FILE:kite-admin>")
  target_compile_options(admin_interop_test PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
  target_include_directories(admin_interop_test PRIVATE ${CMAKE_SOURCE_DIR}/tests)
  add_dependencies(admin_interop_test kite-acceptor kite_qf_peer kite-admin)
endif()

if(KITE_QUICKFIX)
  # Every version both ways, dictionaries on both sides (issue 35's proof).
  kite_test(version_interop_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/version_interop_test.cpp LABELS interop)
  target_compile_definitions(version_interop_test PRIVATE KITE_ACCEPTOR_BIN="$<TARGET_FILE:kite-acceptor>"
    KITE_INITIATOR_BIN="$<TARGET_FILE:kite-initiator>" KITE_QF_PEER_BIN="$<TARGET_FILE:kite_qf_peer>")
  add_dependencies(version_interop_test kite-acceptor kite-initiator kite_qf_peer)
endif()
