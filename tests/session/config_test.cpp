#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "kite/session/config.hpp"
#include "kite/session/timezone.hpp"

namespace kite::session {
namespace {

const char* kGood = R"(
[engine]
model = "single"

[defaults]
BeginString = "FIX.4.4"
SenderCompID = "KITE"
HeartBtInt = 30
StoreKind = "memory"
ResetOnLogon = "Y"

[[session]]
TargetCompID = "CLIENT1"
SocketAcceptPort = 9876
StartTime = "08:00:00"
EndTime = "17:30:00"
TimeZone = "UTC+01:00"
Days = ["Mon", "Tue", "Wednesday"]
Password = "pw"

[[session]]
BeginString = "FIXT.1.1"
DefaultApplVerID = "FIX.5.0SP2"
TargetCompID = "CLIENT2"
ConnectionType = "initiator"
SocketConnectHost = "127.0.0.1"
SocketConnectPort = 9877
StoreKind = "file"
FileStorePath = "store"
FlushPolicy = "count"
FlushEveryN = 10
UseDataDictionary = true
DataDictionary = "FIX50SP2.xml"
MaxLatency = 5
)";

TEST(SessionConfig, everyFixVersionLoads) {
  for (const char* v : {"FIX.4.0", "FIX.4.1", "FIX.4.2", "FIX.4.3", "FIX.4.4", "FIXT.1.1"}) {
    const Config c = parse_config(
        std::string("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nBeginString=\"") + v + "\"\n", "kite.toml");
    ASSERT_EQ(c.sessions.size(), 1u) << v;
    EXPECT_EQ(c.sessions[0].begin_string, v);
  }
}

TEST(SessionConfig, validationSettingsAsQuickFixNamesThem) {
  const Config c = parse_config(R"(
[[session]]
SenderCompID = "A"
TargetCompID = "B"
ValidateFieldsHaveValues = "N"
ValidateUserDefinedFields = "N"
ValidateFieldsOutOfOrder = "N"
AllowUnknownMsgFields = "Y"
CheckCompID = "N"

[[session]]
SenderCompID = "A"
TargetCompID = "C"
)",
                                "kite.toml");
  ASSERT_EQ(c.sessions.size(), 2u);
  const SessionSettings& a = c.sessions[0];
  EXPECT_FALSE(a.validate_fields_have_values);
  EXPECT_FALSE(a.validate_user_defined_fields);
  EXPECT_FALSE(a.validate_fields_out_of_order);
  EXPECT_TRUE(a.allow_unknown_msg_fields);
  EXPECT_FALSE(a.check_comp_id);
  const SessionSettings& d = c.sessions[1];  // QuickFIX's defaults
  EXPECT_TRUE(d.validate_fields_have_values);
  EXPECT_TRUE(d.validate_user_defined_fields);
  EXPECT_TRUE(d.validate_fields_out_of_order);
  EXPECT_FALSE(d.allow_unknown_msg_fields);
  EXPECT_TRUE(d.check_comp_id);
}

TEST(SessionConfig, loadsDefaultsAndSessions) {
  const Config c = parse_config(kGood, "kite.toml");
  ASSERT_EQ(c.sessions.size(), 2u);
  const SessionSettings& a = c.sessions[0];
  EXPECT_EQ(a.id(), "FIX.4.4:KITE->CLIENT1");
  EXPECT_EQ(a.heart_bt_int, 30);
  EXPECT_TRUE(a.reset_on_logon);
  EXPECT_EQ(a.socket_accept_port, 9876);
  EXPECT_FALSE(a.schedule.always);
  EXPECT_EQ(a.schedule.start_sec, 8 * 3600);
  ASSERT_NE(a.schedule.zone, nullptr);
  EXPECT_EQ(a.schedule.zone->offset_at(0), 3600);
  EXPECT_EQ(a.schedule.days, 0x0e);
  EXPECT_EQ(a.password, "pw");
  const SessionSettings& b = c.sessions[1];
  EXPECT_EQ(b.role, Role::initiator);
  EXPECT_EQ(b.default_appl_ver_id, "9");
  EXPECT_EQ(b.store.kind, StoreKind::file);
  EXPECT_EQ(b.store.flush, FlushPolicy::every_n);
  EXPECT_EQ(b.store.flush_every_n, 10u);
  EXPECT_TRUE(b.validate);
  EXPECT_EQ(b.max_latency_s, 5);
}

TEST(SessionConfig, resendRequestTimeoutAndRetries) {
  const Config d = parse_config("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\n", "kite.toml");
  EXPECT_EQ(d.sessions[0].resend_timeout_ms, 10'000);
  EXPECT_EQ(d.sessions[0].resend_retries, 2u);
  const Config c = parse_config(
      "[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nResendRequestTimeout=0\nResendRequestRetries=5\n",
      "kite.toml");
  EXPECT_EQ(c.sessions[0].resend_timeout_ms, 0);
  EXPECT_EQ(c.sessions[0].resend_retries, 5u);
}

std::string error_of(const std::string& text) {
  try {
    parse_config(text, "bad.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SessionConfig, unknownKeyNamesFileSessionAndSetting) {
  const std::string e = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nHeartBeatInt=30\n");
  EXPECT_NE(e.find("bad.toml"), std::string::npos) << e;
  EXPECT_NE(e.find("session 1"), std::string::npos) << e;
  EXPECT_NE(e.find("HeartBeatInt"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown setting"), std::string::npos) << e;
}

TEST(SessionConfig, wrongTypeIsReported) {
  const std::string e = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nHeartBtInt=\"thirty\"\n");
  EXPECT_NE(e.find("HeartBtInt"), std::string::npos) << e;
  EXPECT_NE(e.find("expected an integer"), std::string::npos) << e;
}

TEST(SessionConfig, badValueIsReported) {
  const std::string e = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nBeginString=\"FIX.9.9\"\n");
  EXPECT_NE(e.find("BeginString"), std::string::npos) << e;
  EXPECT_NE(e.find("FIX.9.9"), std::string::npos) << e;
  const std::string tz = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nTimeZone=\"Mars/Olympus\"\n");
  EXPECT_NE(tz.find("TimeZone"), std::string::npos) << tz;
}

TEST(SessionConfig, resendRequestTimeoutOutOfRangeIsReported) {
  const std::string e = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nResendRequestTimeout=-1\n");
  EXPECT_NE(e.find("ResendRequestTimeout"), std::string::npos) << e;
}

TEST(SessionConfig, postgresqlStoreSettingsAsQuickFixNamesThem) {
  const Config c = parse_config(R"(
[[session]]
SenderCompID = "KITE"
TargetCompID = "PEER"
StoreKind = "postgresql"
PostgreSQLStoreDatabase = "fix"
PostgreSQLStoreUser = "kite"
PostgreSQLStoreHost = "db1"
PostgreSQLStorePort = 5433
PostgreSQLStoreCommit = "sync"
PostgreSQLStoreGroupMax = 64
PostgreSQLStoreAsyncWindow = 256
RefreshOnLogon = true
)",
                                "kite.toml");
  ASSERT_EQ(c.sessions.size(), 1u);
  const StoreSettings& s = c.sessions[0].store;
  EXPECT_EQ(s.kind, StoreKind::postgresql);
  EXPECT_EQ(s.pg_database, "fix");
  EXPECT_EQ(s.pg_user, "kite");
  EXPECT_EQ(s.pg_host, "db1");
  EXPECT_EQ(s.pg_port, 5433);
  EXPECT_EQ(s.pg_commit, CommitPolicy::sync);
  EXPECT_EQ(s.pg_group_max, 64u);
  EXPECT_EQ(s.pg_async_window, 256u);
  EXPECT_TRUE(s.refresh_on_logon);
  const std::string e =
      error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nPostgreSQLStoreCommit=\"later\"\n");
  EXPECT_NE(e.find("is not async or sync"), std::string::npos) << e;
}

TEST(SessionConfig, alternateConnectAddressesAsQuickFixNamesThem) {
  const Config c = parse_config(R"(
[defaults]
ConnectionType = "initiator"
SocketConnectHost = "10.0.0.1"
SocketConnectPort = 9876
SocketConnectHost1 = "10.0.0.2"
SocketConnectPort1 = 9877
[[session]]
SenderCompID = "A"
TargetCompID = "B"
SocketConnectHost2 = "10.0.0.3"
SocketConnectPort2 = 9878
[[session]]
SenderCompID = "A"
TargetCompID = "C"
)",
                                "kite.toml");
  ASSERT_EQ(c.sessions.size(), 2u);
  const auto& a = c.sessions[0].socket_connect_alternates;
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].host, "10.0.0.2");
  EXPECT_EQ(a[0].port, 9877);
  EXPECT_EQ(a[1].host, "10.0.0.3");
  EXPECT_EQ(a[1].port, 9878);
  ASSERT_EQ(c.sessions[1].socket_connect_alternates.size(), 1u);  // [defaults]' only
  const std::string base = "[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nConnectionType=\"initiator\"\n"
                           "SocketConnectHost=\"h\"\nSocketConnectPort=1\n";
  const std::string gap = error_of(base + "SocketConnectHost2=\"h2\"\nSocketConnectPort2=2\n");
  EXPECT_NE(gap.find("SocketConnectHost1: missing"), std::string::npos) << gap;
  const std::string port = error_of(base + "SocketConnectHost1=\"h1\"\n");
  EXPECT_NE(port.find("SocketConnectPort1: missing"), std::string::npos) << port;
  const std::string range = error_of(base + "SocketConnectHost1=\"h1\"\nSocketConnectPort1=0\n");
  EXPECT_NE(range.find("SocketConnectPort1"), std::string::npos) << range;
  const std::string unknown = error_of(base + "SocketConnectHostX=\"h1\"\n");
  EXPECT_NE(unknown.find("unknown setting"), std::string::npos) << unknown;
}

TEST(SessionConfig, missingRequiredIsReportedWithTheSession) {
  const std::string e =
      error_of("[[session]]\nSenderCompID=\"A\"\n\n[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"C\"\n");
  EXPECT_NE(e.find("session 1"), std::string::npos) << e;
  EXPECT_NE(e.find("TargetCompID"), std::string::npos) << e;
  EXPECT_NE(e.find("missing"), std::string::npos) << e;
  const std::string f = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nStoreKind=\"file\"\n");
  EXPECT_NE(f.find("FileStorePath"), std::string::npos) << f;
  const std::string g = error_of("[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nStartTime=\"08:00:00\"\n");
  EXPECT_NE(g.find("EndTime"), std::string::npos) << g;
}

TEST(SessionConfig, errorInDefaultsNamesTheDefaultsTable) {
  const std::string e = error_of("[defaults]\nResetOnLogon=3\n[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\n");
  EXPECT_NE(e.find("[defaults]"), std::string::npos) << e;
  EXPECT_NE(e.find("ResetOnLogon"), std::string::npos) << e;
}

TEST(SessionConfig, syntaxErrorNamesFileAndLine) {
  const std::string e = error_of("[[session]\nSenderCompID=\"A\"\n");
  EXPECT_NE(e.find("bad.toml:1"), std::string::npos) << e;
}

TEST(SessionConfig, duplicateSessionIsRefused) {
  const std::string e = error_of(
      "[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\n[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\n");
  EXPECT_NE(e.find("configured twice"), std::string::npos) << e;
}

TEST(SessionConfig, loadsFromAFileAndNamesItInErrors) {
  const std::string path = "/tmp/kite-config-test-" + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << "[[session]]\nSenderCompID=\"A\"\nTargetCompID=\"B\"\nMaxMessageSize=1\n";
  try {
    load_config(path);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("MaxMessageSize"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(load_config(path), ConfigError);
}

}  // namespace
}  // namespace kite::session
