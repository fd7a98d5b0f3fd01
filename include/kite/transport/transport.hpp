// Transport vocabulary shared by every byte-stream backend.
//
// A transport moves bytes of one TCP connection between a socket (or a vendor
// stack's equivalent) and the connection's receive and send buffers. Every
// call on the hot path answers with an Io value, in the spirit of wrk2's
// `sock {connect, close, read, write, readable}` returning OK/ERROR/RETRY:
//   ok      progress was made (bytes moved, or the operation was started);
//   retry   nothing can be done now (EAGAIN, buffer full): try again later;
//   closed  the peer closed the stream in order;
//   error   the stream is broken (reset, protocol violation): close it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kite::transport {

enum class Io : std::uint8_t { ok, retry, closed, error };

struct IoResult {
  Io status;
  std::size_t bytes;  // bytes moved when status == ok
  int err;            // errno when status == error
};

// The transports DESIGN.md names. `onload` and `vma` are launch-time stacks:
// the binary drives kernel sockets and the vendor launcher (LD_PRELOAD)
// takes them over, so inside the process they run the kernel backend.
// `tcpdirect` and `socketxtreme` are native vendor APIs, compiled only with
// KITE_WITH_TCPDIRECT / KITE_WITH_SOCKETXTREME and their SDK headers.
// `tls` is kernel TCP with OpenSSL in user space (KITE_WITH_TLS; tls.hpp).
enum class Kind : std::uint8_t { kernel, uring, onload, vma, tcpdirect, socketxtreme, tls };

const char* to_string(Kind k) noexcept;
// Parses "kernel", "uring", ...; false when the name is unknown.
bool parse_kind(std::string_view s, Kind& out) noexcept;
// Whether this build can drive `k` in-process (uring needs KITE_WITH_URING;
// tcpdirect/socketxtreme need their SDKs; tls needs KITE_WITH_TLS; onload/vma need only the kernel
// backend, the launcher does the rest).
bool compiled_in(Kind k) noexcept;
// Whether io_uring can be set up on this machine right now (a ring is made
// and torn down). `why` receives the reason when it cannot.
bool uring_available(const char** why = nullptr) noexcept;

}  // namespace kite::transport
