#include <gtest/gtest.h>

#include <string>

#include "kite/codec/codec.hpp"

namespace kite::codec {
namespace {

TEST(EncoderTest, writesAMessageThatFramesAndIndexes) {
  HeaderTemplate h({"FIX.4.4", "KITE", "PEER", "", "", "", ""});
  MessageWriter w(h, TimePrecision::micros);
  char buf[512];
  w.begin(buf, sizeof buf, "8", 42, 1'700'000'000'123'456'000);
  w.add_string(tag::ClOrdID, "ORD-1");
  w.add_decimal(tag::Price, {10125, -2});
  w.add_uint(tag::OrderQty, 100);
  const std::size_t n = w.finish();
  ASSERT_GT(n, 0u);
  const std::string_view msg(buf, n);
  const FrameResult fr = frame(msg);
  ASSERT_EQ(fr.status, FrameStatus::complete) << to_string(fr.error) << " " << msg;
  EXPECT_EQ(fr.size, n);
  FieldIndex ix;
  ASSERT_TRUE(ix.build(msg));
  Header hd;
  ASSERT_TRUE(read_header(ix, hd));
  EXPECT_EQ(hd.msg_type, "8");
  EXPECT_EQ(hd.sender_comp_id, "KITE");
  EXPECT_EQ(hd.msg_seq_num, 42u);
  EXPECT_EQ(hd.sending_time, "20231114-22:13:20.123456");
  Decimal px;
  ASSERT_EQ(ix.get(tag::Price, px), Get::ok);
  EXPECT_EQ(px, (Decimal{101250, -3}));
}

}  // namespace
}  // namespace kite::codec
