// kite-fixprint end to end: a sample log with SOH, '|' and "^A" separators,
// line prefixes, nested groups, a broken frame and a message that fails
// validation; the tool's output is checked line by line.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "support/command_testing.hpp"

namespace {

using Output = kite::test::CommandOutput;

Output run(const std::string& args) { return kite::test::run_command(std::string(KITE_FIXPRINT_BIN) + " " + args); }

std::string sample() {
  const char* src = std::getenv("KITE_SOURCE_DIR");
  return std::string(src != nullptr ? src : ".") + "/tests/tools/data/sample.log";
}

bool has(const std::string& out, const std::string& s) { return out.find(s) != std::string::npos; }

TEST(FixPrint, printsEveryMessageOfTheSampleLog) {
  const Output r = run("--no-color " + sample());
  EXPECT_TRUE(has(r.out, "== #7")) << r.out;
  EXPECT_FALSE(has(r.out, "== #8")) << r.out;
  EXPECT_EQ(r.status, 1);  // one frame is broken
}

TEST(FixPrint, detectsEachSeparatorAndKeepsLinePrefixes) {
  const Output r = run("--no-color " + sample());
  // SOH, with a timestamp and direction prefix
  EXPECT_TRUE(has(r.out, "== #1  [2024-03-15 09:30:00.123456 IN:]  NewOrderSingle (35=D)  seq 2  CLIENT -> KITE"))
      << r.out;
  // '|'
  EXPECT_TRUE(has(r.out, "== #2  [OUT:]  ExecutionReport (35=8)  seq 2  KITE -> CLIENT  FIX.4.4")) << r.out;
  // "^A", FIXT.1.1 with the FIX50SP2 application dictionary
  EXPECT_TRUE(has(r.out, "== #3  Logon (35=A)  seq 1  CLIENT -> KITE  FIXT.1.1")) << r.out;
  EXPECT_TRUE(has(r.out, "   1137  DefaultApplVerID          9\n")) << r.out;
  // two SOH messages on one line, FIX.4.2 then FIX.4.4
  EXPECT_TRUE(has(r.out, "== #5  Heartbeat (35=0)  seq 6  CLIENT -> KITE  FIX.4.2")) << r.out;
  EXPECT_TRUE(has(r.out, "== #6  Heartbeat (35=0)  seq 4  CLIENT -> KITE  FIX.4.4")) << r.out;
}

TEST(FixPrint, namesFieldsExplainsEnumsAndIndentsNestedGroups) {
  const Output r = run("--no-color " + sample());
  EXPECT_TRUE(has(r.out, "     54  Side                      1  (BUY)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "     18  ExecInst                  1 G  (NOT_HELD ALL_OR_NONE)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "    453  NoPartyIDs                2\n")) << r.out;
  EXPECT_TRUE(has(r.out, "      448  PartyID                 BRKR\n")) << r.out;
  EXPECT_TRUE(has(r.out, "        523  PartySubID            DESK1\n")) << r.out;
  EXPECT_TRUE(has(r.out, "     55  Symbol                    MSFT\n")) << r.out;  // back at body level
}

TEST(FixPrint, flagsTheInvalidFrameAndCarriesOn) {
  const Output r = run("--no-color " + sample());
  EXPECT_TRUE(has(r.out, "== #4  [IN:]  INVALID: CheckSum (10) does not match the message's bytes")) << r.out;
  EXPECT_TRUE(has(r.out, "    10=000\n")) << r.out;
  const auto bad = r.out.find("== #4");
  const auto next = r.out.find("== #5");
  EXPECT_LT(bad, next);
}

TEST(FixPrint, validateShowsTheRejectAndMarksTheField) {
  const Output plain = run("--no-color " + sample());
  EXPECT_FALSE(has(plain.out, "REJECT")) << plain.out;
  const Output r = run("--no-color --validate " + sample());
  EXPECT_TRUE(has(r.out, "REJECT 5: Value is incorrect (out of range) for this tag: tag 54 (Side)")) << r.out;
  EXPECT_TRUE(has(r.out, "Z  (?)  << Value is incorrect")) << r.out;
  EXPECT_EQ(r.out.find("REJECT"), r.out.rfind("REJECT"));  // the valid messages pass
}

TEST(FixPrint, readsStdinWithoutColourCodes) {
  const Output r = run("--no-color < " + sample());
  EXPECT_TRUE(has(r.out, "== #7")) << r.out;
  EXPECT_TRUE(has(r.out, "(stdin, separator '|')")) << r.out;
  EXPECT_EQ(r.out.find('\033'), std::string::npos);
}

TEST(FixPrint, allValidInputExitsZeroAndHelpDescribesOptions) {
  const Output ok = run("--no-color < /dev/null");
  EXPECT_EQ(ok.status, 0);
  EXPECT_TRUE(ok.out.empty()) << ok.out;
  const Output help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(has(help.out, "--dict-dir")) << help.out;
  EXPECT_TRUE(has(help.out, "--validate")) << help.out;
  EXPECT_TRUE(has(help.out, "--no-color")) << help.out;
  const Output missing = run("/nonexistent-kite.log 2>/dev/null");
  EXPECT_EQ(missing.status, 2);
}

TEST(FixPrint, missingDictionaryStillPrintsTheFields) {
  const Output r = run("--no-color --dict-dir /nonexistent-kite-dicts " + sample() + " 2>&1");
  EXPECT_TRUE(has(r.out, "cannot open the dictionary file")) << r.out;
  EXPECT_TRUE(has(r.out, "     54  ?")) << r.out;
}

}  // namespace
