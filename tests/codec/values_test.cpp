#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kite/codec/detail/level_ops.hpp"
#include "kite/codec/digits.hpp"
#include "kite/codec/level.hpp"
#include "kite/codec/values.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace kite::codec {
namespace {

std::string render_decimal(Decimal d) {
  char buf[kMaxDecimalChars];
  return {buf, write_decimal(buf, d)};
}
std::string render_timestamp(std::int64_t ns, TimePrecision p) {
  char buf[kMaxTimestampChars];
  return {buf, write_utc_timestamp(buf, ns, p)};
}
constexpr std::int64_t kSecond = 1'000'000'000;

TEST(ValuesTest, parsesUnsignedIntegersAndRejectsAnythingElse) {
  std::uint64_t v = 7;
  ASSERT_TRUE(parse_uint("0", v));
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(parse_uint("000123", v));
  EXPECT_EQ(v, 123u);
  ASSERT_TRUE(parse_uint("9999999999999999999", v));
  EXPECT_EQ(v, 9999999999999999999ull);
  for (const char* bad : {"", "-1", "+1", "1 ", " 1", "1a", "12345678901234567890", "1.0"}) {
    v = 42;
    EXPECT_FALSE(parse_uint(bad, v)) << bad;
    EXPECT_EQ(v, 42u) << "a failed parse leaves the output alone";
  }
}

TEST(ValuesTest, parsesSignedIntegersWithLeadingZerosAndMinus) {
  std::int64_t v = 0;
  ASSERT_TRUE(parse_int("-42", v));
  EXPECT_EQ(v, -42);
  ASSERT_TRUE(parse_int("-0", v));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(parse_int("0007", v));
  EXPECT_EQ(v, 7);
  ASSERT_TRUE(parse_int("-999999999999999999", v));
  EXPECT_EQ(v, -999999999999999999);
  for (const char* bad : {"", "-", "--1", "+5", "1-", "12a"}) EXPECT_FALSE(parse_int(bad, v)) << bad;
}

TEST(ValuesTest, parsesDecimalsAsMantissaAndExponent) {
  struct Case {
    const char* text;
    Decimal want;
  };
  for (const Case& c :
       {Case{"101.25", {10125, -2}}, Case{"101.2500", {1012500, -4}}, Case{"-0.50", {-50, -2}},
        Case{"000123.4500", {1234500, -4}}, Case{"0", {0, 0}}, Case{"0.000", {0, 0}}, Case{"-0", {0, 0}},
        Case{"7", {7, 0}}, Case{"1.", {1, 0}}, Case{".5", {5, -1}}, Case{"0.00001", {1, -5}},
        Case{"-12.003", {-12003, -3}}, Case{"123456789012345678", {123456789012345678, 0}}}) {
    Decimal d{99, 99};
    ASSERT_TRUE(parse_decimal(c.text, d)) << c.text;
    EXPECT_EQ(d.mantissa, c.want.mantissa) << c.text;
    EXPECT_EQ(d.exponent, c.want.exponent) << c.text;
  }
  Decimal d;
  for (const char* bad : {"", "-", ".", "-.", "1.2.3", "1e5", "abc", "1,5", "--1", "+1", "1234567890123456789"})
    EXPECT_FALSE(parse_decimal(bad, d)) << bad;
}

TEST(ValuesTest, decimalsCompareByValueNotByRepresentation) {
  EXPECT_EQ((Decimal{10125, -2}), (Decimal{1012500, -4}));
  EXPECT_EQ((Decimal{0, 0}), (Decimal{0, -5}));
  EXPECT_LT((Decimal{-1, 0}), (Decimal{1, -3}));
  EXPECT_LT((Decimal{10124, -2}), (Decimal{1012500, -4}));
  std::int64_t ticks = 0;
  ASSERT_TRUE((Decimal{10125, -2}).scaled_to(-4, ticks));
  EXPECT_EQ(ticks, 1012500);
  EXPECT_FALSE((Decimal{10125, -4}).scaled_to(-2, ticks)) << "not exact at two places";
}

TEST(ValuesTest, rendersDecimalsAndParsesThemBack) {
  EXPECT_EQ(render_decimal({10125, -2}), "101.25");
  EXPECT_EQ(render_decimal({-5, -3}), "-0.005");
  EXPECT_EQ(render_decimal({12345, 2}), "1234500");
  EXPECT_EQ(render_decimal({0, -2}), "0.00");
  EXPECT_EQ(render_decimal({0, 3}), "0");
  EXPECT_EQ(render_decimal({INT64_MIN + 1, 0}), "-9223372036854775807");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t m = static_cast<std::int64_t>(rng() % 1'000'000'000'000'000ull) * (rng() % 2 ? 1 : -1) /
                           static_cast<std::int64_t>(1 + rng() % 1000000);
    const Decimal d{m, -static_cast<std::int32_t>(rng() % 10)};
    const std::string s = render_decimal(d);
    EXPECT_EQ(s.size(), decimal_chars(d)) << s;
    Decimal back;
    ASSERT_TRUE(parse_decimal(s, back)) << s;
    ASSERT_EQ(back, d) << s;
  }
}

TEST(ValuesTest, decimalCharsCountsExactlyWhatIsWritten) {
  for (const Decimal d : {Decimal{0, 0}, Decimal{0, -20}, Decimal{-1, -25}, Decimal{5, 30}, Decimal{123, -1},
                          Decimal{-123, -3}, Decimal{-123, -4}, Decimal{INT64_MIN + 1, -20}}) {
    EXPECT_EQ(render_decimal(d).size(), decimal_chars(d)) << d.mantissa << "e" << d.exponent;
    EXPECT_LE(decimal_chars(d), kMaxDecimalChars);
  }
}

TEST(ValuesTest, rendersIntegersAtEveryDigitCount) {
  char buf[kMaxIntChars];
  std::uint64_t v = 1;
  for (int digits = 1; digits <= 20; ++digits, v *= 10) {
    for (const std::uint64_t x : {v, v * 10 - 1}) {
      if (digits == 20 && x < v) continue;
      const std::string s(buf, write_uint(buf, x));
      EXPECT_EQ(s, std::to_string(x));
      EXPECT_EQ(uint_digits(x), s.size());
    }
    if (digits == 19) break;
  }
  EXPECT_EQ(std::string(buf, write_uint(buf, UINT64_MAX)), "18446744073709551615");
  EXPECT_EQ(std::string(buf, write_int(buf, INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(std::string(buf, write_int(buf, -7)), "-7");
}

TEST(ValuesTest, parsesCharsAndBooleans) {
  char c = 0;
  ASSERT_TRUE(parse_char("2", c));
  EXPECT_EQ(c, '2');
  EXPECT_FALSE(parse_char("", c));
  EXPECT_FALSE(parse_char("12", c));
  bool b = false;
  ASSERT_TRUE(parse_bool("Y", b));
  EXPECT_TRUE(b);
  ASSERT_TRUE(parse_bool("N", b));
  EXPECT_FALSE(b);
  for (const char* bad : {"", "y", "n", "YES", "1", "T"}) EXPECT_FALSE(parse_bool(bad, b)) << bad;
}

TEST(ValuesTest, parsesUtcTimestampsAtEveryPrecision) {
  const std::int64_t base = days_from_civil(2024, 3, 15) * 86400 * kSecond + (9 * 3600 + 30 * 60 + 5) * kSecond;
  struct Case {
    const char* text;
    std::int64_t nanos;
    TimePrecision precision;
  };
  for (const Case& c : {Case{"20240315-09:30:05", base, TimePrecision::seconds},
                        Case{"20240315-09:30:05.123", base + 123'000'000, TimePrecision::millis},
                        Case{"20240315-09:30:05.123456", base + 123'456'000, TimePrecision::micros},
                        Case{"20240315-09:30:05.123456789", base + 123'456'789, TimePrecision::nanos}}) {
    std::int64_t ns = 0;
    TimePrecision p = TimePrecision::nanos;
    ASSERT_TRUE(parse_utc_timestamp(c.text, ns, &p)) << c.text;
    EXPECT_EQ(ns, c.nanos) << c.text;
    EXPECT_EQ(p, c.precision) << c.text;
  }
  std::int64_t ns;
  for (const char* bad : {"", "20240315", "20240315-09:30", "20240315 09:30:05", "20240315-24:00:00",
                          "20240315-09:60:00", "20240315-09:30:61", "20240315-09:30:05.12", "20240315-09:30:05.1234",
                          "20240315-09:30:05.", "20240315-09:30:05,123", "20241315-09:30:05", "20240230-09:30:05",
                          "2024031-09:30:05.1", "20240315-9:30:05.12", "20240315-09:30:05.12a"})
    EXPECT_FALSE(parse_utc_timestamp(bad, ns)) << bad;
  ASSERT_TRUE(parse_utc_timestamp("20161231-23:59:60", ns)) << "a leap second is a valid UTCTimestamp";
  EXPECT_FALSE(parse_utc_timestamp("02240315-09:30:00", ns)) << "year 224 does not fit 64-bit nanoseconds";
  EXPECT_FALSE(parse_utc_timestamp("99991231-23:59:59", ns));
  ASSERT_TRUE(parse_utc_timestamp("18000101-00:00:00", ns));
  EXPECT_LT(ns, 0);
}

// A thread's last second is remembered: a stamp that repeats it is judged
// by its fraction alone, with the answer a full reading gives.
TEST(ValuesTest, aStampRepeatingTheLastSecondIsJudgedByItsFraction) {
  for (const std::int32_t year : {2024, 1950}) {  // 1950: a negative second
    const std::int64_t base = days_from_civil(year, 3, 15) * 86400 * kSecond + (9 * 3600 + 30 * 60 + 5) * kSecond;
    const std::string second = std::to_string(year) + "0315-09:30:05";
    std::int64_t ns = 0;
    TimePrecision p = TimePrecision::seconds;
    ASSERT_TRUE(parse_utc_timestamp(second + ".123", ns, &p));
    EXPECT_EQ(ns, base + 123'000'000);
    ASSERT_TRUE(parse_utc_timestamp(second + ".999", ns, &p));
    EXPECT_EQ(ns, base + 999'000'000);
    EXPECT_EQ(p, TimePrecision::millis);
    ASSERT_TRUE(parse_utc_timestamp(second, ns, &p));
    EXPECT_EQ(ns, base);
    EXPECT_EQ(p, TimePrecision::seconds);
    ASSERT_TRUE(parse_utc_timestamp(second + ".000001", ns, &p));
    EXPECT_EQ(ns, base + 1'000);
    EXPECT_EQ(p, TimePrecision::micros);
    ASSERT_TRUE(parse_utc_timestamp(second + ".987654321", ns, &p));
    EXPECT_EQ(ns, base + 987'654'321);
    EXPECT_EQ(p, TimePrecision::nanos);
    for (const char* bad : {".12a", ",123", ".1234", ".", ".12", "0", ".12345a", ".12345678:", "/123"})
      EXPECT_FALSE(parse_utc_timestamp(second + bad, ns)) << second + bad;
  }
}

TEST(ValuesTest, timestampsRoundTripAtEachPrecisionTruncatingBelowIt) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t ns = static_cast<std::int64_t>(rng() % (4'102'444'800ll * kSecond));  // 1970..2100
    for (const TimePrecision p :
         {TimePrecision::seconds, TimePrecision::millis, TimePrecision::micros, TimePrecision::nanos}) {
      const std::string s = render_timestamp(ns, p);
      std::int64_t unit = 1;
      for (int k = static_cast<int>(p); k < 9; ++k) unit *= 10;
      std::int64_t back = -1;
      TimePrecision seen;
      ASSERT_TRUE(parse_utc_timestamp(s, back, &seen)) << s;
      EXPECT_EQ(back, ns - ns % unit) << s;
      EXPECT_EQ(seen, p) << s;
    }
  }
  EXPECT_EQ(render_timestamp(0, TimePrecision::millis), "19700101-00:00:00.000");
  EXPECT_EQ(render_timestamp(951'782'400 * kSecond + 1, TimePrecision::nanos), "20000229-00:00:00.000000001");
}

TEST(ValuesTest, timestampsOfEveryDayAgreeWithTheCivilCalendar) {
  // The fixed path takes 1901..2099 without a division; the general path
  // the rest. Both must give days_from_civil's day, at every boundary.
  for (std::int32_t y = 1890; y <= 2110; ++y) {
    for (std::int32_t m = 1; m <= 12; ++m) {
      for (std::int32_t day = 1; day <= 31; ++day) {
        char text[28];
        write_date(text, {y, m, day});
        Date parsed;
        const bool real = parse_date({text, 8}, parsed);
        std::memcpy(text + 8, "-23:59:58.250", 13);
        std::int64_t ns = 0;
        ASSERT_EQ(parse_utc_timestamp({text, 21}, ns), real) << std::string(text, 21);
        if (real) {
          ASSERT_EQ(ns, (days_from_civil(y, m, day) * 86400 + 86398) * kSecond + 250'000'000) << std::string(text, 21);
        }
      }
    }
  }
}

// The word-at-a-time number parses against their byte-loop twins, on every
// text of up to 8 bytes from a small alphabet (random) and on the edges.
TEST(ValuesTest, wordNumberParsesAgreeWithTheirTwins) {
  const auto check = [](const std::string& text) {
    char buf[16] = {};
    std::memcpy(buf, text.data(), text.size());
    std::memset(buf + text.size(), '7', sizeof buf - text.size());  // bytes after the value must not count
    Decimal word{}, twin{};
    const bool w = detail::parse_decimal_word(buf, text.size(), word);
    const bool t = parse_decimal(text, twin);
    if (w) {
      ASSERT_TRUE(t) << text;
      ASSERT_EQ(word.mantissa, twin.mantissa) << text;
      ASSERT_EQ(word.exponent, twin.exponent) << text;
    } else if (!text.empty() && text.size() <= 8 && text.find('-') == std::string::npos) {
      ASSERT_FALSE(t) << text << ": the word parse refused a plain decimal";
    }
    std::uint64_t uw = 0, ut = 0;
    const bool iw = detail::parse_uint_word(buf, text.size(), uw);
    const bool it = parse_uint(text, ut);
    if (text.size() <= 8) {
      ASSERT_EQ(iw, it) << text;
    }
    if (iw) {
      ASSERT_EQ(uw, ut) << text;
    }
  };
  for (const char* edge : {"",
                           "0",
                           "9",
                           ".",
                           "..",
                           "0.",
                           ".0",
                           "1.5",
                           "101.2500",
                           "99999999",
                           "9999999.",
                           ".9999999",
                           "0.000000",
                           "00000000",
                           "1.2.3",
                           "-1",
                           "1-",
                           "+1",
                           "1e5",
                           "12345678",
                           "1234567.8",
                           "/",
                           ":",
                           "\xFF.5",
                           "1\x9E.5",
                           "\xCE"
                           "5.5",
                           "12.\xFF",
                           ".5.",
                           "5..",
                           "..5"})
    check(edge);
  std::mt19937_64 rng(5);
  const std::string alphabet = "0123456789.-/:x";
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    const std::size_t n = rng() % 10;
    for (std::size_t k = 0; k < n; ++k) text += alphabet[rng() % (k % 3 == 0 ? alphabet.size() : 11)];
    check(text);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Any byte (the point's search must not be fooled by bytes of 0x80 and up).
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    const std::size_t n = rng() % 10;
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = rng();
      text += r % 3 == 0 ? static_cast<char>(r >> 8) : alphabet[(r >> 8) % 11];
    }
    check(text);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// A plain reading of the word parse's layout, byte by byte: the texts it must
// take, with the civil calendar's days.
bool plain_timestamp(const std::string& s, std::int64_t& nanos, std::size_t& digits) {
  const std::size_t n = s.size();
  if (n != 17 && n != 21 && n != 24 && n != 27) return false;
  const char* const layout = "dddddddd-dd:dd:dd.ddddddddd";
  for (std::size_t i = 0; i < n; ++i) {
    if (layout[i] == 'd' ? s[i] < '0' || s[i] > '9' : s[i] != layout[i]) return false;
  }
  const auto number = [&](std::size_t at, std::size_t len) {
    std::int64_t v = 0;
    for (std::size_t i = 0; i < len; ++i) v = v * 10 + (s[at + i] - '0');
    return v;
  };
  const std::int64_t year = number(0, 4), hours = number(9, 2), minutes = number(12, 2), seconds = number(15, 2);
  Date date;
  if (year < 1901 || year > 2099 || !parse_date(s.substr(0, 8), date) || hours > 23 || minutes > 59 || seconds > 60)
    return false;
  digits = n == 17 ? 0 : n - 18;
  std::int64_t fraction = number(18, digits);
  for (std::size_t i = digits; i < 9; ++i) fraction *= 10;
  nanos = (days_from_civil(date.year, date.month, date.day) * 86400 + hours * 3600 + minutes * 60 + seconds) * kSecond +
          fraction;
  return true;
}

// The word timestamp against the plain reading, on each field's every value
// and on every byte at every place. Each text ends a heap buffer of its size
// (only its bytes may be read), and is read again followed by 32 other bytes
// (a whole vector may be read): digits and punctuation that would continue
// the layout, or any byte.
void word_timestamp_agrees_with_a_plain_reading(detail::TimestampWordRead read) {
  std::mt19937 junk(29);
  const auto check = [&junk, read](const std::string& text) {
    const auto buf = std::make_unique<char[]>(text.size() + 1);
    char* const at = buf.get() + 1;  // no byte after the text
    std::memcpy(at, text.data(), text.size());
    std::int64_t word = -7, plain = -7;
    std::size_t word_digits = 99, plain_digits = 99;
    const bool w = read(at, text.size(), word, word_digits, text.size());
    ASSERT_EQ(w, plain_timestamp(text, plain, plain_digits)) << text;
    ASSERT_EQ(word, plain) << text;
    ASSERT_EQ(word_digits, plain_digits) << text;
    const auto more = std::make_unique<char[]>(text.size() + 32);
    std::memcpy(more.get(), text.data(), text.size());
    const bool like_layout = junk() % 2 == 0;
    for (std::size_t i = 0; i < 32; ++i)
      more[text.size() + i] = like_layout ? "0123456789-:."[junk() % 13] : static_cast<char>(junk());
    std::int64_t whole = -7;
    std::size_t whole_digits = 99;
    ASSERT_EQ(read(more.get(), text.size(), whole, whole_digits, text.size() + 32), w) << text;
    ASSERT_EQ(whole, word) << text;
    ASSERT_EQ(whole_digits, word_digits) << text;
  };
  const auto put = [](std::string& text, std::size_t at, std::size_t len, std::uint64_t v) {
    for (std::size_t i = len; i-- > 0; v /= 10) text[at + i] = static_cast<char>('0' + v % 10);
  };
  const std::string base = "20240229-23:59:60.123456789";
  for (const std::size_t n : {17, 21, 24, 27}) {
    for (const std::size_t field : {0, 2, 4, 6, 9, 12, 15}) {  // century, year, month, day, hours, minutes, seconds
      for (int v = 0; v < 100; ++v) {
        std::string text = base.substr(0, n);
        put(text, field, 2, static_cast<std::uint64_t>(v));
        for (const char* year : {"1900", "1901", "1999", "2000", "2023", "2099", "2100"}) {
          text.replace(0, 4, year);
          check(text);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      for (int b = 0; b < 256; ++b) {
        std::string text = base.substr(0, n);
        text[i] = static_cast<char>(b);
        check(text);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  for (std::size_t n = 0; n <= 32; ++n) check((base + "00000").substr(0, n));
  std::mt19937_64 rng(13);
  for (int i = 0; i < 200000; ++i) {
    std::string text = base;
    put(text, 0, 4, 1890 + rng() % 220);
    put(text, 4, 2, rng() % 14);
    put(text, 6, 2, rng() % 33);
    put(text, 9, 2, rng() % 25);
    put(text, 12, 2, rng() % 61);
    put(text, 15, 2, rng() % 62);
    put(text, 18, 9, rng() % 1000000000);
    text.resize(std::vector<std::size_t>{17, 21, 24, 27}[rng() % 4]);
    check(text);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The read built into the caller, and each level's vector read this CPU has
// (values.hpp; a level without one, or one the CPU lacks, is skipped).
bool inline_timestamp(const char* c, std::size_t n, std::int64_t& nanos, std::size_t& digits,
                      std::size_t readable) noexcept {
  return detail::utc_timestamp_inline(c, n, nanos, digits, readable);
}
// Runs check on each level's vector read this CPU has (stopping at a fatal
// failure); the test is skipped when there is none.
template <class Check>
void on_each_vector_timestamp_read(Check check) {
  bool any = false;
  for (const Level l : kLevels) {
    const detail::TimestampWordRead read = detail::timestamp_word_read(l);
    if (read == nullptr) continue;
    any = true;
    SCOPED_TRACE(to_string(l));
    check(read);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (!any) GTEST_SKIP() << "no level of this CPU has a vector timestamp read";
}

TEST(ValuesTest, wordTimestampAgreesWithAPlainReading) { word_timestamp_agrees_with_a_plain_reading(inline_timestamp); }

TEST(ValuesTest, levelsVectorTimestampAgreesWithAPlainReading) {
  on_each_vector_timestamp_read(word_timestamp_agrees_with_a_plain_reading);
}

// The read in use (the level's, where it has one) is the one the index's typed read takes.
TEST(ValuesTest, theLevelInUseReadsTheTimestamp) {
  EXPECT_EQ(detail::g_timestamp_word_read, detail::timestamp_word_read(active_level()));
  std::int64_t nanos = 0;
  std::size_t digits = 0;
  ASSERT_TRUE(detail::parse_utc_timestamp_word("20240315-09:30:00.123456", 24, nanos, digits));
  EXPECT_EQ(nanos, 1710495000123456000);
  EXPECT_EQ(digits, 6u);
}

#if defined(__linux__)
// The word timestamp reads nothing past its n bytes: each text ends just
// before a page that may not be read (a masked or expanding load must not
// touch it either, which the sanitizers do not see).
void word_timestamp_stops_at_its_last_byte(detail::TimestampWordRead read) {
  const long page = sysconf(_SC_PAGESIZE);
  void* const map =
      mmap(nullptr, static_cast<std::size_t>(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  char* const end = static_cast<char*>(map) + page;
  ASSERT_EQ(mprotect(end, static_cast<std::size_t>(page), PROT_NONE), 0);
  const std::string base = "20240229-23:59:59.123456789000";
  for (std::size_t n = 0; n <= base.size(); ++n) {
    std::memcpy(end - n, base.data(), n);
    std::int64_t nanos = 0;
    std::size_t digits = 0;
    EXPECT_EQ(read(end - n, n, nanos, digits, 0), n == 17 || n == 21 || n == 24 || n == 27) << n;
    EXPECT_EQ(read(end - n, n, nanos, digits, n), n == 17 || n == 21 || n == 24 || n == 27) << n;
  }
  // 32 bytes that may be read, the last right before the page: the whole
  // vector's load ends there.
  std::memcpy(end - 32, base.data(), base.size());  // 30 bytes, and 2 more that may be read
  for (const std::size_t n : {17, 21, 24, 27}) {
    std::int64_t nanos = 0;
    std::size_t digits = 0;
    EXPECT_TRUE(read(end - 32, n, nanos, digits, 32)) << n;
  }
  munmap(map, static_cast<std::size_t>(2 * page));
}

TEST(ValuesTest, wordTimestampStopsAtItsLastByte) { word_timestamp_stops_at_its_last_byte(inline_timestamp); }

TEST(ValuesTest, levelsVectorTimestampStopsAtItsLastByte) {
  on_each_vector_timestamp_read(word_timestamp_stops_at_its_last_byte);
}
#endif

TEST(ValuesTest, parsesUtcTimeOnly) {
  std::int64_t ns = 0;
  ASSERT_TRUE(parse_utc_time_only("23:59:59.999", ns));
  EXPECT_EQ(ns, 86399 * kSecond + 999'000'000);
  ASSERT_TRUE(parse_utc_time_only("00:00:00", ns));
  EXPECT_EQ(ns, 0);
  ASSERT_TRUE(parse_utc_time_only("12:00:00.000000001", ns));
  EXPECT_EQ(ns, 43200 * kSecond + 1);
  for (const char* bad : {"", "24:00:00", "12:00", "12-00-00", "12:00:00.1", "1:00:00"})
    EXPECT_FALSE(parse_utc_time_only(bad, ns)) << bad;
}

TEST(ValuesTest, datesKnowLeapYears) {
  Date d;
  EXPECT_TRUE(parse_date("20240229", d));
  EXPECT_EQ(d, (Date{2024, 2, 29}));
  EXPECT_TRUE(parse_date("20000229", d)) << "divisible by 400";
  EXPECT_FALSE(parse_date("19000229", d)) << "divisible by 100 only";
  EXPECT_FALSE(parse_date("20230229", d));
  EXPECT_TRUE(parse_date("20231231", d));
  for (const char* bad : {"", "2024022", "202402290", "20240001", "20241301", "20240100", "20240431", "2024o229"})
    EXPECT_FALSE(parse_date(bad, d)) << bad;
}

TEST(ValuesTest, civilDaysRoundTripOverFourCenturies) {
  std::int64_t expect = days_from_civil(1900, 1, 1);
  for (std::int32_t y = 1900; y < 2300; ++y) {
    for (std::int32_t m = 1; m <= 12; ++m) {
      for (std::int32_t day = 1; day <= 31; ++day) {
        char text[9];
        write_date(text, {y, m, day});
        Date parsed;
        if (!parse_date({text, 8}, parsed)) continue;  // no such day
        ASSERT_EQ(days_from_civil(y, m, day), expect) << text;
        ASSERT_EQ(civil_from_days(expect), (Date{y, m, day})) << text;
        ++expect;
      }
    }
  }
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
}

// The word-at-a-time writers against their scalar twins: the same text and
// end for random numbers of every length, nothing past their limit.
TEST(DigitsTwin, wideWritersWriteWhatTheScalarOnesWrite) {
  std::mt19937_64 rng(33);
  const auto check_uint = [](std::uint64_t v) {
    char a[64], b[64];
    std::memset(b, '#', sizeof b);
    const std::size_t na = static_cast<std::size_t>(write_uint(a, v) - a);
    const std::size_t nb = static_cast<std::size_t>(write_uint_wide(b, v) - b);
    ASSERT_EQ(std::string(a, na), std::string(b, nb)) << v;
    for (std::size_t i = kMaxUintChars; i < sizeof b; ++i) ASSERT_EQ(b[i], '#') << v;
  };
  const auto check_decimal = [](Decimal d) {
    char a[96], b[96];
    std::memset(b, '#', sizeof b);
    const std::size_t na = static_cast<std::size_t>(write_decimal(a, d) - a);
    const std::size_t nb = static_cast<std::size_t>(write_decimal_wide(b, d) - b);
    ASSERT_EQ(std::string(a, na), std::string(b, nb)) << d.mantissa << "e" << d.exponent;
    for (std::size_t i = kMaxDecimalChars; i < sizeof b; ++i) ASSERT_EQ(b[i], '#') << d.mantissa << "e" << d.exponent;
  };
  for (const std::uint64_t v : {std::uint64_t{0}, std::uint64_t{9}, std::uint64_t{10}, std::uint64_t{99'999'999},
                                std::uint64_t{100'000'000}, std::uint64_t{9'999'999'999'999'999},
                                std::uint64_t{10'000'000'000'000'000}, ~std::uint64_t{0}})
    check_uint(v);
  for (int i = 0; i < 200'000; ++i) {
    const int digits = static_cast<int>(rng() % 21);
    std::uint64_t v = rng();
    if (digits < 20) {
      std::uint64_t limit = 1;
      for (int k = 0; k < digits; ++k) limit *= 10;
      v %= limit;
    }
    check_uint(v);
    const std::int64_t m = static_cast<std::int64_t>(v) >> (rng() % 64);
    check_decimal({(rng() & 1) != 0 ? m : -m, static_cast<std::int32_t>(rng() % 45) - 22});
    check_decimal({static_cast<std::int64_t>(rng() % 200'000'000), -static_cast<std::int32_t>(rng() % 10)});
  }
}

}  // namespace
}  // namespace kite::codec
