#include "kite/session/settings.hpp"

#include <stdexcept>

namespace kite::session {

bool known_begin_string(std::string_view b) noexcept {
  for (const char* k : kBeginStrings)
    if (b == k) return true;
  return false;
}

std::string SessionSettings::id() const { return begin_string + ":" + sender_comp_id + "->" + target_comp_id; }

void SessionSettings::check() const {
  const auto bad = [](const char* setting, const std::string& why) {
    throw std::invalid_argument(std::string(setting) + ": " + why);
  };
  if (!known_begin_string(begin_string)) bad("BeginString", "\"" + begin_string + "\" is not " + kBeginStringList);
  if (sender_comp_id.empty()) bad("SenderCompID", "missing");
  if (target_comp_id.empty()) bad("TargetCompID", "missing");
  if (heart_bt_int < 0 || heart_bt_int > 3600) bad("HeartBtInt", "must be 0..3600 seconds");
  if (test_request_delay < 0 || test_request_delay > 10) bad("TestRequestDelayMultiplier", "must be 0..10");
  if (max_message_size < 64) bad("MaxMessageSize", "must be at least 64 bytes");
  if (logon_timeout_ms <= 0) bad("LogonTimeout", "must be positive");
  if (logout_timeout_ms <= 0) bad("LogoutTimeout", "must be positive");
  if (resend_timeout_ms < 0) bad("ResendRequestTimeout", "must be 0 (never) or positive");
  if (send_claim_bytes < 256) bad("SendClaimBytes", "must be at least 256");
  if (overflow_bytes < send_claim_bytes) bad("OverflowBytes", "must be at least SendClaimBytes");
  if (reconnect_interval_ms <= 0) bad("ReconnectInterval", "must be positive");
  if (reconnect_max_ms < reconnect_interval_ms) bad("ReconnectIntervalMax", "must be at least ReconnectInterval");
  if (store.kind == StoreKind::file && store.path.empty()) bad("FileStorePath", "required when StoreKind is file");
  if (store.flush == FlushPolicy::every_n && store.flush_every_n == 0) bad("FlushEveryN", "must be positive");
  if (store.flush == FlushPolicy::every_ms && store.flush_every_ms == 0) bad("FlushEveryMs", "must be positive");
  if (validate && data_dictionary.empty()) bad("DataDictionary", "required when UseDataDictionary is true");
  if (role == Role::initiator && socket_connect_host.empty() && socket_connect_port != 0)
    bad("SocketConnectHost", "missing for an initiator with a SocketConnectPort");
  for (std::size_t i = 0; i < socket_connect_alternates.size(); ++i) {
    const ConnectAddress& a = socket_connect_alternates[i];
    const std::string n = std::to_string(i + 1);
    if (a.host.empty())
      bad(("SocketConnectHost" + n).c_str(), "missing (alternates are numbered 1, 2, ... without a gap, each with "
                                             "its SocketConnectPort" + n + ")");
    if (a.port == 0) bad(("SocketConnectPort" + n).c_str(), "missing for SocketConnectHost" + n);
  }
  if (!socket_connect_alternates.empty() && socket_connect_host.empty())
    bad("SocketConnectHost", "missing: alternates (SocketConnectHost1...) follow it");
}

}  // namespace kite::session
