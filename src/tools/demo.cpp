// kite-demo: decodes, validates and encodes a few sample FIX.4.4 messages
// with Kite's codec and says what it did at each step.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "kite/codec/codec.hpp"
#include "kite/codec/dictionary.hpp"
#include "kite/codec/validator.hpp"
#include "kite/util/dictionary_dir.hpp"

namespace kite::app {
namespace {

using namespace kite::codec;

std::string fix(std::string body) {
  for (char& c : body)
    if (c == '|') c = kSoh;
  std::string m = "8=FIX.4.4" + std::string(1, kSoh) + "9=" + std::to_string(body.size()) + kSoh + body;
  char tail[8];
  std::snprintf(tail, sizeof tail, "10=%03u", ScalarScan::checksum(m.data(), m.data() + m.size()));
  return m + tail + kSoh;
}

std::string printable(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c == kSoh) c = '|';
  return out;
}

struct Sample {
  const char* what;
  std::string bytes;
};

std::vector<Sample> samples() {
  const std::string nos =
      fix("35=D|34=7|49=CLIENT01|52=20240315-09:30:00.123|56=KITEEXCH|1=ACC-7731|11=ORD-1|21=1|38=1500|40=2|"
          "44=101.2500|54=1|55=MSFT|59=0|60=20240315-09:30:00.123456|453=2|448=TRADER7|447=D|452=11|448=FIRM1|447=D|"
          "452=13|");
  std::string bad_sum = nos;
  bad_sum[bad_sum.size() - 2] = bad_sum[bad_sum.size() - 2] == '0' ? '1' : '0';
  return {
      {"a NewOrderSingle with two parties", nos},
      {"an OrderCancelRequest",
       fix("35=F|34=8|49=CLIENT01|52=20240315-09:30:01.000|56=KITEEXCH|11=ORD-2|41=ORD-1|54=1|55=MSFT|"
           "60=20240315-09:30:01.000|")},
      {"a NewOrderSingle whose Side is not a Side",
       fix("35=D|34=9|49=CLIENT01|52=20240315-09:30:02.000|56=KITEEXCH|11=ORD-3|21=1|38=100|40=1|54=Z|55=IBM|"
           "60=20240315-09:30:02.000|")},
      {"a message missing its ClOrdID",
       fix("35=D|34=10|49=CLIENT01|52=20240315-09:30:03.000|56=KITEEXCH|21=1|38=100|40=1|54=1|55=IBM|"
           "60=20240315-09:30:03.000|")},
      {"the first NewOrderSingle with a wrong CheckSum", bad_sum},
      {"noise, then half a message", "hello" + nos.substr(0, 40)},
  };
}

int run(const std::string& dictionary_dir, int iterations) {
  const DictionaryLoad load = Dictionary::load(dictionary_dir + "/FIX44.xml");
  if (!load) {
    std::fprintf(stderr, "kite-demo: %s\n", load.error.c_str());
    return 1;
  }
  Validator validator(*load.dictionary);
  FieldIndex ix;
  const HeaderTemplate tmpl({"FIX.4.4", "KITEEXCH", "CLIENT01", "", "", "", ""});
  MessageWriter writer(tmpl, TimePrecision::micros);
  char out[1024];
  std::uint64_t out_seq = 1;

  for (const Sample& s : samples()) {
    std::printf("== %s (%zu bytes)\n   %s\n", s.what, s.bytes.size(), printable(s.bytes).c_str());
    std::size_t at = 0;
    while (at < s.bytes.size()) {
      const FrameResult fr = frame(std::string_view(s.bytes).substr(at));
      if (fr.status == FrameStatus::incomplete) {
        std::printf("   frame: incomplete, waiting for more bytes (%zu held)\n", s.bytes.size() - at);
        break;
      }
      if (fr.status == FrameStatus::invalid) {
        std::printf("   frame: invalid, %s; discard %u bytes\n", to_string(fr.error), fr.size);
        at += fr.size;
        continue;
      }
      const std::string_view msg = std::string_view(s.bytes).substr(at, fr.size);
      at += fr.size;
      std::printf("   frame: complete, %u bytes, body [%u, %u)\n", fr.size, fr.body_begin, fr.body_end);
      if (const IndexResult ir = ix.build(msg); !ir) {
        std::printf("   index: %s at byte %u\n", to_string(ir.error), ir.offset);
        continue;
      }
      Header h;
      if (const HeaderResult hr = read_header(ix, h); !hr) {
        std::printf("   header: %s\n", to_string(hr.error));
        continue;
      }
      std::printf("   index: %u fields; MsgType %.*s, MsgSeqNum %llu, %.*s -> %.*s, SendingTime %.*s\n", ix.size(),
                  static_cast<int>(h.msg_type.size()), h.msg_type.data(),
                  static_cast<unsigned long long>(h.msg_seq_num), static_cast<int>(h.sender_comp_id.size()),
                  h.sender_comp_id.data(), static_cast<int>(h.target_comp_id.size()), h.target_comp_id.data(),
                  static_cast<int>(h.sending_time.size()), h.sending_time.data());
      const ValidationResult vr = validator.validate(ix, h);
      if (!vr) {
        std::printf("   validate: rejected, SessionRejectReason %d, RefTagID %u: %s\n", static_cast<int>(vr.reason),
                    vr.ref_tag, vr.text);
        writer.begin(out, sizeof out, "3", out_seq++, utc_now_ns());
        writer.add_uint(tag::RefSeqNum, h.msg_seq_num);
        writer.add_uint(tag::RefTagID, vr.ref_tag);
        writer.add_string(tag::RefMsgType, h.msg_type);
        writer.add_int(tag::SessionRejectReason, static_cast<std::int64_t>(vr.reason));
        writer.add_string(tag::Text, vr.text);
      } else {
        std::printf("   validate: ok\n");
        std::string_view cl, symbol;
        char side = '?';
        Decimal qty, px;
        std::int64_t t = 0;
        ix.get(tag::ClOrdID, cl);
        ix.get(tag::Symbol, symbol);
        ix.get(tag::Side, side);
        const bool has_qty = ix.get(tag::OrderQty, qty) == Get::ok;
        const bool has_px = ix.get(tag::Price, px) == Get::ok;
        ix.get_timestamp(tag::TransactTime, t);
        char qbuf[kMaxDecimalChars], pbuf[kMaxDecimalChars];
        const int qn = static_cast<int>(write_decimal(qbuf, qty) - qbuf);
        const int pn = has_px ? static_cast<int>(write_decimal(pbuf, px) - pbuf) : 0;
        std::printf("   read: ClOrdID %.*s, Symbol %.*s, Side %c", static_cast<int>(cl.size()), cl.data(),
                    static_cast<int>(symbol.size()), symbol.data(), side);
        if (has_qty)
          std::printf(", OrderQty %.*s (mantissa %lld, exponent %d)", qn, qbuf, static_cast<long long>(qty.mantissa),
                      qty.exponent);
        if (has_px)
          std::printf(", Price %.*s (mantissa %lld, exponent %d)", pn, pbuf, static_cast<long long>(px.mantissa),
                      px.exponent);
        std::printf(", TransactTime %lld ns since the epoch\n", static_cast<long long>(t));
        const bool cancel = h.msg_type == "F";
        writer.begin(out, sizeof out, "8", out_seq++, utc_now_ns());
        writer.add_string(tag::OrderID, "KX-1");
        writer.add_string(tag::ClOrdID, cl);
        writer.add_string(tag::ExecID, cancel ? "KX-E-2" : "KX-E-1");
        writer.add_char(tag::ExecType, cancel ? '4' : '0');
        writer.add_char(tag::OrdStatus, cancel ? '4' : '0');
        writer.add_string(tag::Symbol, symbol);
        writer.add_char(tag::Side, side);
        writer.add_decimal(tag::LeavesQty, cancel ? Decimal{0, 0} : qty);
        writer.add_uint(tag::CumQty, 0);
        writer.add_decimal(tag::AvgPx, {0, 0});
        writer.add_timestamp(tag::TransactTime, utc_now_ns());
      }
      const std::size_t n = writer.finish();
      std::printf("   encode: %zu bytes: %s\n", n, printable({out, n}).c_str());
    }
  }

  if (iterations > 0) {
    const std::string nos = samples()[0].bytes;
    std::uint64_t sink = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) {
      ix.frame_and_build(nos.data(), nos.size());
      Header h;
      read_header(ix, h);
      sink += validator.validate(ix, h).ok + ix.size();
    }
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / iterations;
    asm volatile("" : "+r"(sink));
    std::printf("== frame + index + header + validation of the first sample: %.0f ns each over %d runs\n", ns,
                iterations);
    std::printf("   (codec_bench compares Kite with QuickFIX: see docs/codec.md)\n");
  }
  return 0;
}

}  // namespace
}  // namespace kite::app

int main(int argc, char** argv) {
  CLI::App app("kite-demo: decode, validate and encode sample FIX.4.4 messages with Kite's codec");
  std::string dir = kite::util::dictionary_dir();
  int iterations = 100000;
  app.add_option("--dictionaries", dir, "folder with FIX44.xml")->capture_default_str();
  app.add_option("--iterations", iterations, "timed decode+validate runs at the end (0: none)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return kite::app::run(dir, iterations);
}
