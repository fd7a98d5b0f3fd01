// Arbitrary bytes through the whole receive path: frame, index, header and
// typed reads of every field, with every level's walk held against the SWAR
// and scalar twins.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kite/codec/codec.hpp"
#include "kite/codec/level.hpp"

namespace {

using namespace kite::codec;

void check(bool ok) {
  if (!ok) std::abort();
}

void read_every_field(const FieldIndex& ix) {
  for (const FieldRef& f : ix) {
    const std::string_view v = ix.value(f);
    std::uint64_t u;
    std::int64_t i;
    Decimal d;
    char c;
    bool b;
    std::int64_t ns;
    Date date;
    if (parse_uint(v, u)) {
      char buf[kMaxUintChars];
      std::uint64_t back = 0;
      check(parse_uint({buf, static_cast<std::size_t>(write_uint(buf, u) - buf)}, back) && back == u);
    }
    (void)parse_int(v, i);
    if (parse_decimal(v, d)) {
      char buf[kMaxDecimalChars];
      const char* end = write_decimal(buf, d);
      check(static_cast<std::size_t>(end - buf) == decimal_chars(d));
      Decimal back;
      check(parse_decimal({buf, static_cast<std::size_t>(end - buf)}, back) && back == d);
    }
    (void)parse_char(v, c);
    (void)parse_bool(v, b);
    TimePrecision p;
    if (parse_utc_timestamp(v, ns, &p)) {
      char buf[kMaxTimestampChars];
      std::int64_t back = 0;
      const char* end = write_utc_timestamp(buf, ns, p);
      // A leap second (":60") renders as the next minute's ":00"; both parse.
      check(parse_utc_timestamp({buf, static_cast<std::size_t>(end - buf)}, back) && back == ns);
    }
    (void)parse_utc_time_only(v, ns);
    (void)parse_date(v, date);
  }
}

// One level's walk (`fast`) against the SWAR and scalar twins on the input.
void run(const detail::LevelOps& fast, const std::uint8_t* data, std::size_t size) {
  static FieldIndex swar_ix(256), scalar_ix(256);
  const char* p = reinterpret_cast<const char*>(data);
  std::size_t at = 0;
  for (int frames = 0; at < size && frames < 64; ++frames) {
    const std::size_t n = size - at;
    const FrameResult a = fast.frame(p + at, n, 4096);
    const FrameResult w = frame<SwarScan>(p + at, n, 4096);
    check(a.status == w.status && a.error == w.error && a.size == w.size);
    const FrameResult s = frame<ScalarScan>(p + at, n, 4096);
    check(a.status == s.status && a.error == s.error && a.size == s.size && a.body_begin == s.body_begin &&
          a.body_end == s.body_end);
    // frame_and_build answers as frame() does, and leaves the index build()
    // leaves (compared below).
    static FieldIndex fused_ix(256);
    const FramedIndex fa = fast.frame_and_build(fused_ix, p + at, n, 4096);
    check(fa.frame.status == a.status && fa.frame.error == a.error && fa.frame.size == a.size);
    check(a.status == FrameStatus::complete || fused_ix.size() == 0);
    if (a.status == FrameStatus::incomplete) {
      check(a.size == 0);
      break;
    }
    check(a.size >= 1 && a.size <= n);
    if (a.status == FrameStatus::complete) {
      check(a.body_begin < a.body_end && a.body_end + 7 == a.size);
      const IndexResult ra = fast.build(swar_ix, p + at, a.size);
      const IndexResult rw = scalar_ix.build<SwarScan>(p + at, a.size);
      check(ra.error == rw.error && ra.offset == rw.offset && swar_ix.size() == scalar_ix.size());
      const IndexResult rs = scalar_ix.build<ScalarScan>(p + at, a.size);
      check(ra.error == rs.error && ra.offset == rs.offset && ra.tag == rs.tag && swar_ix.size() == scalar_ix.size());
      for (std::uint32_t i = 0; i < swar_ix.size(); ++i) {
        const FieldRef &x = swar_ix[i], &y = scalar_ix[i];
        check(x.tag == y.tag && x.offset == y.offset && x.length == y.length);
        check(x.offset >= 2 && x.offset + x.length < a.size && p[at + x.offset + x.length] == kSoh);
        // The tag against its text, parsed the slow way.
        const std::uint32_t from = i == 0 ? 0 : swar_ix[i - 1].offset + swar_ix[i - 1].length + 1;
        std::uint64_t t = 0;
        check(p[at + x.offset - 1] == '=' && parse_uint({p + at + from, x.offset - 1 - from}, t) && t == x.tag);
      }
      // The framed build (the three fields frame() checked recorded, the
      // body walked) gives the same index, slots included.
      static FieldIndex framed_ix(256);
      const IndexResult rf = fast.build_framed(framed_ix, p + at, a);
      check(rf.error == rs.error && rf.offset == rs.offset && rf.tag == rs.tag && framed_ix.size() == scalar_ix.size());
      for (std::uint32_t i = 0; i < framed_ix.size(); ++i) {
        const FieldRef &x = framed_ix[i], &y = scalar_ix[i];
        check(x.tag == y.tag && x.offset == y.offset && x.length == y.length);
        check(framed_ix.find_pos(y.tag) == scalar_ix.find_pos(y.tag));
      }
      check(fa.index.error == rs.error && fa.index.offset == rs.offset && fa.index.tag == rs.tag &&
            fused_ix.size() == scalar_ix.size());
      for (std::uint32_t i = 0; i < fused_ix.size(); ++i) {
        const FieldRef &x = fused_ix[i], &y = scalar_ix[i];
        check(x.tag == y.tag && x.offset == y.offset && x.length == y.length);
        check(fused_ix.find_pos(y.tag) == scalar_ix.find_pos(y.tag));
      }
      if (ra) {
        // A complete frame's index ends with the CheckSum field.
        check(swar_ix.size() >= 3 && swar_ix[swar_ix.size() - 1].tag == tag::CheckSum);
        Header h;
        if (read_header(swar_ix, h)) check(h.body_length == a.body_end - a.body_begin);
        read_every_field(swar_ix);
      }
    }
    at += a.size;
  }
  // The index walk alone over the raw bytes (not framed): twins agree.
  const std::size_t m = size < 2048 ? size : 2048;
  const IndexResult ra = fast.build(swar_ix, p, m);
  const IndexResult rs = scalar_ix.build<ScalarScan>(p, m);
  check(ra.error == rs.error && ra.offset == rs.offset && swar_ix.size() == scalar_ix.size());
  check(SwarScan::checksum(p, p + size) == ScalarScan::checksum(p, p + size));
  check(fast.checksum(p, p + size) == ScalarScan::checksum(p, p + size));
  for (std::size_t i = 0; i < size; i += 64) {
    std::uint64_t e1, s1, e2, s2, e3, s3;
    const std::size_t k = size - i < 64 ? size - i : 64;
    fast.classify(p + i, k, e1, s1);
    SwarScan::classify(p + i, k, e2, s2);
    ScalarScan::classify(p + i, k, e3, s3);
    check(e1 == e3 && s1 == s3 && e2 == e3 && s2 == s3);
  }
}

}  // namespace

// Every level this CPU has (level.hpp), each against the twins.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const Level l : kLevels)
    if (const detail::LevelOps* ops = detail::level_ops(l)) run(*ops, data, size);
  return 0;
}
