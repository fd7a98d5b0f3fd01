// Everything that configures one FIX session, as a plain C++ struct. The TOML
// loader (config.hpp) fills the same struct; the names in comments are the
// configuration file's keys (chosen to be QuickFIX's where one exists).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kite/codec/values.hpp"
#include "kite/session/schedule.hpp"

namespace kite::session {

enum class Role : unsigned char { acceptor, initiator };
enum class StoreKind : unsigned char { file, memory, null, postgresql };

// When a postgresql store's writes may reach the peer (docs/store.md):
// async sends at once and commits behind; sync holds an answer until the
// transaction holding it and the inbound number that caused it commits.
enum class CommitPolicy : unsigned char { async, sync };

// When the file store asks the kernel to write its mapping to disk (msync).
// Every policy survives a crash of the process (the data is in the page
// cache as soon as it is copied into the mapping); they differ in what a
// crash of the machine can lose. See docs/store.md.
enum class FlushPolicy : unsigned char {
  none,           // the kernel writes back when it likes (~30 s)
  every_message,  // msync(MS_SYNC) after each stored message
  every_n,        // msync after every `flush_every_n` messages
  every_ms,       // msync at most every `flush_every_ms` milliseconds
};

struct StoreSettings {
  StoreKind kind = StoreKind::memory;      // StoreKind: "file" | "memory" | "null" | "postgresql"
  std::string path;                        // FileStorePath: a folder, one journal per session
  FlushPolicy flush = FlushPolicy::none;   // FlushPolicy: "none" | "message" | "count" | "time"
  std::uint32_t flush_every_n = 100;       // FlushEveryN
  std::uint32_t flush_every_ms = 10;       // FlushEveryMs
  std::size_t capacity_bytes = 16u << 20;  // StoreCapacity: journal size, allocated and mapped at open
                                           // (postgresql: the in-process copy and the write queue each)

  // StoreKind "postgresql" (QuickFIX's names where it has one).
  std::string pg_database;                       // PostgreSQLStoreDatabase
  std::string pg_user;                           // PostgreSQLStoreUser
  std::string pg_password;                       // PostgreSQLStorePassword
  std::string pg_host;                           // PostgreSQLStoreHost: a name, an address or a socket folder
  std::uint16_t pg_port = 0;                     // PostgreSQLStorePort (0: libpq's default)
  std::string pg_conninfo;                       // PostgreSQLStoreConnectionString: a libpq conninfo or URI;
                                                 // the settings above override its keys
  CommitPolicy pg_commit = CommitPolicy::async;  // PostgreSQLStoreCommit: "async" | "sync"
  std::uint32_t pg_group_max = 512;              // PostgreSQLStoreGroupMax: most queued writes per transaction
  std::uint32_t pg_async_window = 1024;          // PostgreSQLStoreAsyncWindow: under async, most outbound
                                                 // numbers sent past the database's committed one
  std::uint32_t pg_keepalive_idle_s = 10;        // PostgreSQLStoreKeepaliveIdle: TCP keepalive on the database
  std::uint32_t pg_keepalive_interval_s = 2;     // PostgreSQLStoreKeepaliveInterval
  std::uint32_t pg_keepalive_count = 3;          // PostgreSQLStoreKeepaliveCount
  // RefreshOnLogon (QuickFIX's name; postgresql only): take the session and
  // reload it from the database at each Logon, let it go at disconnect, so
  // an active and a standby acceptor can share one database.
  bool refresh_on_logon = false;
};

// The BeginStrings a session may have.
inline constexpr const char* kBeginStrings[] = {"FIX.4.0", "FIX.4.1", "FIX.4.2", "FIX.4.3", "FIX.4.4", "FIXT.1.1"};
inline constexpr const char* kBeginStringList = "FIX.4.0, FIX.4.1, FIX.4.2, FIX.4.3, FIX.4.4 or FIXT.1.1";
bool known_begin_string(std::string_view b) noexcept;

struct SessionSettings {
  Role role = Role::acceptor;             // ConnectionType: "acceptor" | "initiator"
  std::string begin_string = "FIX.4.4";   // BeginString: FIX.4.0 | FIX.4.1 | FIX.4.2 | FIX.4.3 |
                                          // FIX.4.4 | FIXT.1.1
  std::string sender_comp_id;             // SenderCompID (required)
  std::string target_comp_id;             // TargetCompID (required)
  std::string sender_sub_id;              // SenderSubID
  std::string target_sub_id;              // TargetSubID
  std::string sender_location_id;         // SenderLocationID
  std::string target_location_id;         // TargetLocationID
  std::string default_appl_ver_id = "9";  // DefaultApplVerID (FIXT only): "7" FIX.5.0, "8" FIX.5.0SP1,
                                          // "9" FIX.5.0SP2

  std::int32_t heart_bt_int = 30;             // HeartBtInt, seconds (initiator proposes it)
  double test_request_delay = 0.5;            // TestRequestDelayMultiplier: silence of
                                              // HeartBtInt * (1 + this) triggers a TestRequest
  std::uint16_t socket_accept_port = 0;       // SocketAcceptPort (read by the daemon)
  std::string socket_connect_host;            // SocketConnectHost (read by the runtime)
  std::uint16_t socket_connect_port = 0;      // SocketConnectPort
  // SocketConnectHost<n>, SocketConnectPort<n> (n = 1, 2, ... without a gap):
  // QuickFIX's alternate addresses; each connect attempt takes the next one,
  // after the last it starts again at SocketConnectHost (active/standby).
  struct ConnectAddress {
    std::string host;
    std::uint16_t port = 0;
  };
  std::vector<ConnectAddress> socket_connect_alternates;
  std::int32_t reconnect_interval_ms = 1000;  // ReconnectInterval (first back-off step)
  std::int32_t reconnect_max_ms = 30000;      // ReconnectIntervalMax (back-off doubles up to this)

  bool reset_on_logon = false;           // ResetOnLogon
  bool reset_on_logout = false;          // ResetOnLogout
  bool reset_on_disconnect = false;      // ResetOnDisconnect
  bool send_reset_seq_num_flag = false;  // SendResetSeqNumFlag: initiator asks for a reset at logon

  Schedule schedule;  // StartTime, EndTime, Days, TimeZone

  StoreSettings store;

  bool validate = false;        // UseDataDictionary
  std::string data_dictionary;  // DataDictionary: path of the XML dictionary
  // With UseDataDictionary (QuickFIX's meanings):
  bool validate_fields_have_values = true;   // ValidateFieldsHaveValues: empty value -> Reject(4)
  bool validate_user_defined_fields = true;  // ValidateUserDefinedFields: N lets tags >= 5000 pass
  bool validate_fields_out_of_order = true;  // ValidateFieldsOutOfOrder: header/body/trailer/group order
  bool allow_unknown_msg_fields = false;     // AllowUnknownMsgFields: Y lets tags not in the
                                             // dictionary, or not in the message, pass
  bool check_comp_id = true;                 // CheckCompID: N accepts any Sender/TargetCompID after Logon

  std::uint32_t max_message_size = 64 * 1024;  // MaxMessageSize: larger inbound frames are refused
  std::int32_t logon_timeout_ms = 10000;       // LogonTimeout
  std::int32_t logout_timeout_ms = 2000;       // LogoutTimeout
  std::int32_t resend_timeout_ms = 10000;      // ResendRequestTimeout: a gap that does not move for this
                                               // long is asked for again (0: never)
  std::uint32_t resend_retries = 2;            // ResendRequestRetries: asked again this many times, then
                                               // Logout and disconnect
  std::uint32_t max_queued = 10000;            // MaxQueuedWhileGap: messages held while a gap is open
  std::size_t queue_bytes = 4u << 20;          // MaxQueuedBytes: bytes held while a gap is open
  std::size_t send_claim_bytes = 8192;         // SendClaimBytes: room asked of the send buffer per message
  std::size_t overflow_bytes = 256 * 1024;     // OverflowBytes: admin/resend bytes held under back-pressure

  std::string username;  // Username (initiator sends it)
  std::string password;  // Password (initiator sends it; acceptor checks it)

  bool check_latency = true;         // CheckLatency
  std::int32_t max_latency_s = 120;  // MaxLatency: allowed |SendingTime - now|, seconds
  codec::TimePrecision timestamp_precision = codec::TimePrecision::millis;  // TimestampPrecision

  // "FIX.4.4:SENDER->TARGET" (QuickFIX's session ID form).
  std::string id() const;
  // Whether the session runs FIXT.1.1 (application version carried apart).
  bool fixt() const noexcept { return begin_string == "FIXT.1.1"; }
  // FIX.4.0 and FIX.4.1: no SessionRejectReason, no BusinessMessageReject
  // (a Reject with Text answers both), EndSeqNo 999999 means "no end".
  bool before_fix42() const noexcept { return begin_string == "FIX.4.0" || begin_string == "FIX.4.1"; }
  // Throws std::invalid_argument naming the setting when the struct is unusable.
  void check() const;
};

}  // namespace kite::session
