// The order-entry application's three modes, driven through real sessions
// (the session layer's scripted peer and fake wire), and the order book alone.
#include <gtest/gtest.h>

#include <map>

#include "app_rig.hpp"

namespace kite::app::test {
namespace {

// --- ack ---------------------------------------------------------------------

TEST(AckMode, answersEachOrderWithAnExecutionReportNew) {
  AppRig rig(Mode::ack);
  auto out = rig.order(0, "A1", '1', 100, "101.25");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "8");
  EXPECT_EQ(out[0].get(tag::ClOrdID), "A1");
  EXPECT_EQ(out[0].get(tag::ExecType), "0");
  EXPECT_EQ(out[0].get(tag::OrdStatus), "0");
  EXPECT_EQ(out[0].get(tag::LeavesQty), "100");
  EXPECT_EQ(out[0].get(tag::CumQty), "0");
  EXPECT_EQ(out[0].get(tag::AvgPx), "0");
  EXPECT_EQ(out[0].get(tag::Price), "101.25");
  EXPECT_FALSE(out[0].has(tag::ExecTransType));  // FIX.4.4 has none
  EXPECT_EQ(rig[0].app->stats().reports, 1u);
}

TEST(AckMode, aNewOrdersExecIdIsItsOrderIdWhateverItsWidth) {
  for (const std::uint64_t id : {1000ull, 1234567890123456ull, 12345678901234567ull, 18446744073709551615ull}) {
    AppRig rig(Mode::ack, 1, "FIX.4.4", 0, id);
    auto out = rig.order(0, "A1", '1', 100, "101.25");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].get(tag::OrderID), std::to_string(id));
    EXPECT_EQ(out[0].get(tag::ExecID), std::to_string(id));
    EXPECT_EQ(out[0].get(tag::ClOrdID), "A1");
  }
}

TEST(AckMode, fix42ReportsCarryExecTransType) {
  AppRig rig(Mode::ack, 1, "FIX.4.2");
  auto out = rig.order(0, "A1", '2', 5, "1");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::BeginString), "FIX.4.2");
  EXPECT_EQ(out[0].get(tag::ExecTransType), "0");
  EXPECT_EQ(out[0].get(tag::ExecType), "0");
}

TEST(AckMode, fixtSessionAnswersOrders) {
  AppRig rig(Mode::ack, 1, "FIXT.1.1");
  auto out = rig.order(0, "T1", '1', 7, "2.5");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::BeginString), "FIXT.1.1");
  EXPECT_EQ(out[0].get(tag::ExecType), "0");
  EXPECT_EQ(out[0].get(tag::ClOrdID), "T1");
}

TEST(AckMode, orderWithoutSideGetsSessionRejectNamingTheTag) {
  AppRig rig(Mode::ack);
  Client& c = rig[0];
  rig.feed(c, c.peer->make("D", [](codec::MessageWriter& w) {
    w.add_string(tag::ClOrdID, "X");
    w.add_string(tag::Symbol, "KITE");
    w.add_uint(tag::OrderQty, 1);
  }));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "3");
  EXPECT_EQ(out[0].get(tag::SessionRejectReason), "1");
  EXPECT_EQ(out[0].get(tag::RefTagID), "54");
}

TEST(AckMode, cancelAndReplaceAreAcceptedAsAsked) {
  AppRig rig(Mode::ack);
  auto c = rig.cancel(0, "C2", "C1");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].get(tag::ExecType), "4");
  EXPECT_EQ(c[0].get(tag::OrigClOrdID), "C1");
  auto r = rig.replace(0, "C3", "C2", 50, "10");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].get(tag::ExecType), "5");
  EXPECT_EQ(r[0].get(tag::LeavesQty), "50");
}

// A report goes into room for its longest rendering with one check, or,
// when the claim is shorter than that, field by field: the same bytes.
TEST(AckMode, reportsAreTheSameWrittenInOneRunOrFieldByField) {
  for (const char* begin : {"FIX.4.0", "FIX.4.1", "FIX.4.2", "FIX.4.4", "FIXT.1.1"}) {
    AppRig wide(Mode::ack, 1, begin);
    AppRig tight(Mode::ack, 1, begin, 400);  // less than the longest rendering after the header
    const auto same = [&](const std::vector<Sent>& a, const std::vector<Sent>& b) {
      ASSERT_EQ(a.size(), 1u) << begin;
      ASSERT_EQ(b.size(), 1u) << begin;
      EXPECT_EQ(a[0].type(), "8") << begin;
      EXPECT_EQ(a[0].raw, b[0].raw) << begin;
    };
    same(wide.order(0, "SAME-1", '2', 1500, "99.5"), tight.order(0, "SAME-1", '2', 1500, "99.5"));
    same(wide.order(0, "SAME-2", '1', 7, "", '1'), tight.order(0, "SAME-2", '1', 7, "", '1'));
    same(wide.cancel(0, "SAME-3", "SAME-1"), tight.cancel(0, "SAME-3", "SAME-1"));
    same(wide.replace(0, "SAME-4", "SAME-2", 9, "0.0001"), tight.replace(0, "SAME-4", "SAME-2", 9, "0.0001"));
  }
}

TEST(AckMode, unsupportedMessageTypeGetsBusinessMessageReject) {
  AppRig rig(Mode::ack);
  Client& c = rig[0];
  rig.feed(c, c.peer->make("AE", [](codec::MessageWriter& w) { w.add_string(571, "R1"); }));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "j");
  EXPECT_EQ(out[0].get(tag::RefMsgType), "AE");
  EXPECT_EQ(out[0].get(tag::BusinessRejectReason), "3");
}

// --- match -------------------------------------------------------------------

TEST(MatchMode, restingOrderIsAcknowledgedAndDoesNotFill) {
  AppRig rig(Mode::match, 2);
  auto out = rig.order(0, "S1", '2', 100, "10");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::ExecType), "0");
  EXPECT_EQ(out[0].get(tag::LeavesQty), "100");
  auto other = rig.order(1, "B1", '1', 100, "9.99");  // does not cross
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].get(tag::ExecType), "0");
  EXPECT_EQ(rig.exchange.books["KITE"].size(), 2u);
}

TEST(MatchMode, crossingOrderFillsBestPriceFirstThenOldestAndBothSidesHear) {
  AppRig rig(Mode::match, 2);
  rig.order(0, "S1", '2', 100, "10");    // oldest at 10.00
  rig.order(0, "S2", '2', 50, "10");     // younger at 10.00
  rig.order(0, "S3", '2', 100, "9.99");  // better price
  auto buy = rig.order(1, "B1", '1', 180, "10");
  // New, then one fill per resting order: 100 @ 9.99, 80 @ 10.
  ASSERT_EQ(buy.size(), 3u);
  EXPECT_EQ(buy[0].get(tag::ExecType), "0");
  EXPECT_EQ(buy[1].get(tag::ExecType), "F");
  EXPECT_EQ(buy[1].get(tag::LastPx), "9.99");
  EXPECT_EQ(buy[1].get(tag::LastQty), "100");
  EXPECT_EQ(buy[1].get(tag::OrdStatus), "1");
  EXPECT_EQ(buy[2].get(tag::LastPx), "10");
  EXPECT_EQ(buy[2].get(tag::LastQty), "80");
  EXPECT_EQ(buy[2].get(tag::OrdStatus), "2");
  EXPECT_EQ(buy[2].get(tag::CumQty), "180");
  EXPECT_EQ(buy[2].get(tag::LeavesQty), "0");
  EXPECT_EQ(buy[2].get(tag::AvgPx), "9.9944");  // (100 x 9.99 + 80 x 10) / 180, in ticks of 0.0001

  auto sells = rig[0].wire.take();
  ASSERT_EQ(sells.size(), 2u);
  EXPECT_EQ(sells[0].get(tag::ClOrdID), "S3");
  EXPECT_EQ(sells[0].get(tag::OrdStatus), "2");
  EXPECT_EQ(sells[1].get(tag::ClOrdID), "S1");  // time priority: S1 before S2
  EXPECT_EQ(sells[1].get(tag::OrdStatus), "1");
  EXPECT_EQ(sells[1].get(tag::LastQty), "80");
  EXPECT_EQ(sells[1].get(tag::LeavesQty), "20");
  std::int64_t ask = 0;
  ASSERT_TRUE(rig.exchange.books["KITE"].best_ask(ask));
  EXPECT_EQ(ask, 100000);  // 10.0000 in ticks
}

TEST(MatchMode, fillOfASessionThatCannotTakeItNowIsStoredAndReachesItByResend) {
  AppRig rig(Mode::match, 2);
  ASSERT_EQ(rig.order(0, "S1", '2', 100, "10").size(), 1u);  // resting: New (our 2 on PEER1)
  rig[0].wire.room = 0;                                      // PEER1's send buffer is full
  auto buy = rig.order(1, "B1", '1', 100, "10");
  ASSERT_EQ(buy.size(), 2u);  // New and the fill
  EXPECT_TRUE(rig[0].wire.take().empty());
  EXPECT_EQ(rig[0].app->stats().stored_for_resend, 1u);
  EXPECT_EQ(rig[0].app->stats().send_failures, 0u);
  EXPECT_EQ(rig[0].session->next_sender_seq(), 4u);  // the fill took 3
  rig[0].wire.room = static_cast<std::size_t>(-1);
  rig.feed(rig[0], rig[0].peer->resend_request(3, 0));
  const auto resent = only(rig[0].wire.take());
  EXPECT_EQ(resent.seq(), 3u);
  EXPECT_EQ(resent.get(tag::ClOrdID), "S1");
  EXPECT_EQ(resent.get(tag::ExecType), "F");
  EXPECT_EQ(resent.get(tag::LastQty), "100");
  EXPECT_EQ(resent.get(tag::PossDupFlag), "Y");
}

TEST(MatchMode, fix42FillsUseExecType1And2AndExecTransType) {
  AppRig rig(Mode::match, 2, "FIX.4.2");
  rig.order(0, "S1", '2', 100, "10");
  auto buy = rig.order(1, "B1", '1', 40, "10");
  ASSERT_EQ(buy.size(), 2u);
  EXPECT_EQ(buy[1].get(tag::ExecType), "2");
  EXPECT_EQ(buy[1].get(tag::ExecTransType), "0");
  auto sell = rig[0].wire.take();
  ASSERT_EQ(sell.size(), 1u);
  EXPECT_EQ(sell[0].get(tag::ExecType), "1");  // partially filled
  EXPECT_EQ(sell[0].get(tag::LastQty), "40");  // LastShares in 4.2: the same tag 32
}

TEST(MatchMode, marketOrderFillsWhatItCanAndTheRestIsCanceled) {
  AppRig rig(Mode::match, 2);
  rig.order(0, "S1", '2', 30, "10");
  auto buy = rig.order(1, "M1", '1', 50, "", '1');
  ASSERT_EQ(buy.size(), 3u);
  EXPECT_EQ(buy[1].get(tag::LastQty), "30");
  EXPECT_EQ(buy[2].get(tag::ExecType), "4");
  EXPECT_EQ(buy[2].get(tag::CumQty), "30");
  EXPECT_EQ(rig.exchange.books["KITE"].size(), 0u);
}

TEST(MatchMode, cancelOfALiveOrderRemovesItAndUnknownOrderGetsOrderCancelReject) {
  AppRig rig(Mode::match);
  rig.order(0, "B1", '1', 100, "10");
  auto c = rig.cancel(0, "B1c", "B1");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type(), "8");
  EXPECT_EQ(c[0].get(tag::ExecType), "4");
  EXPECT_EQ(c[0].get(tag::OrdStatus), "4");
  EXPECT_EQ(c[0].get(tag::OrigClOrdID), "B1");
  EXPECT_EQ(rig.exchange.books["KITE"].size(), 0u);
  auto again = rig.cancel(0, "B1d", "B1");  // already canceled
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].type(), "9");
  EXPECT_EQ(again[0].get(tag::CxlRejResponseTo), "1");
  EXPECT_EQ(again[0].get(tag::CxlRejReason), "1");
  EXPECT_EQ(again[0].get(tag::OrigClOrdID), "B1");
}

TEST(MatchMode, cancelOfAnotherSessionsOrderIsUnknown) {
  AppRig rig(Mode::match, 2);
  rig.order(0, "B1", '1', 100, "10");
  auto c = rig.cancel(1, "X", "B1");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].type(), "9");
  EXPECT_EQ(rig.exchange.books["KITE"].size(), 1u);
}

TEST(MatchMode, replaceChangesQuantityAndPriceAndCanCross) {
  AppRig rig(Mode::match, 2);
  rig.order(0, "B1", '1', 100, "9");
  rig.order(1, "S1", '2', 60, "10");
  auto r = rig.replace(0, "B2", "B1", 120, "10");
  ASSERT_EQ(r.size(), 2u);  // Replaced, then the fill the new price brought
  EXPECT_EQ(r[0].get(tag::ExecType), "5");
  EXPECT_EQ(r[0].get(tag::ClOrdID), "B2");
  EXPECT_EQ(r[0].get(tag::OrderQty), "120");
  EXPECT_EQ(r[1].get(tag::ExecType), "F");
  EXPECT_EQ(r[1].get(tag::LastQty), "60");
  EXPECT_EQ(r[1].get(tag::LeavesQty), "60");
  // The order now answers to B2.
  auto c = rig.cancel(0, "B3", "B2");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].get(tag::ExecType), "4");
  EXPECT_EQ(c[0].get(tag::CumQty), "60");
}

TEST(MatchMode, replaceOfUnknownOrderGetsOrderCancelRejectForAReplace) {
  AppRig rig(Mode::match);
  auto r = rig.replace(0, "B2", "NOPE", 10, "1");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type(), "9");
  EXPECT_EQ(r[0].get(tag::CxlRejResponseTo), "2");
}

TEST(MatchMode, priceOffTheTickGridIsRejected) {
  AppRig rig(Mode::match);
  auto out = rig.order(0, "P1", '1', 10, "1.00001");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::ExecType), "8");
  EXPECT_EQ(out[0].get(tag::OrdStatus), "8");
  EXPECT_EQ(rig.exchange.books["KITE"].size(), 0u);
}

TEST(MatchMode, booksAreKeptPerSymbol) {
  AppRig rig(Mode::match, 2);
  rig.order(0, "S1", '2', 10, "10", '2', "AAA");
  auto buy = rig.order(1, "B1", '1', 10, "10", '2', "BBB");
  ASSERT_EQ(buy.size(), 1u);  // no cross across symbols
  EXPECT_EQ(rig.exchange.books.size(), 2u);
}

// --- the book alone --------------------------------------------------------------

BookOrder limit(std::uint64_t id, Side side, std::int64_t px, std::int64_t qty) {
  BookOrder o;
  o.order_id = id;
  o.side = side;
  o.price = px;
  o.qty = qty;
  o.leaves = qty;
  return o;
}

TEST(OrderBook, replaceKeepsTimePriorityOnlyWhenQuantityGoesDownAtTheSamePrice) {
  OrderBook b;
  std::vector<Fill> f;
  b.add(limit(1, Side::buy, 100, 10), f);
  b.add(limit(2, Side::buy, 100, 10), f);
  ASSERT_TRUE(b.replace(1, 5, 100, f));
  EXPECT_EQ(b.level(Side::buy, 100), (std::vector<std::uint64_t>{1, 2}));
  ASSERT_TRUE(b.replace(1, 20, 100, f));  // more quantity: to the back
  EXPECT_EQ(b.level(Side::buy, 100), (std::vector<std::uint64_t>{2, 1}));
  ASSERT_TRUE(b.replace(2, 10, 101, f));  // new price: its own level
  EXPECT_EQ(b.level(Side::buy, 101), (std::vector<std::uint64_t>{2}));
  std::int64_t bid = 0;
  ASSERT_TRUE(b.best_bid(bid));
  EXPECT_EQ(bid, 101);
  EXPECT_TRUE(f.empty());
}

TEST(OrderBook, replaceBelowTheFilledQuantityIsRefused) {
  OrderBook b;
  std::vector<Fill> f;
  b.add(limit(1, Side::sell, 100, 10), f);
  b.add(limit(2, Side::buy, 100, 4), f);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_FALSE(b.replace(1, 4, 100, f));
  EXPECT_FALSE(b.replace(99, 4, 100, f));
  EXPECT_EQ(b.find(1)->leaves, 6);
}

// --- echo --------------------------------------------------------------------

TEST(EchoMode, newOrderSingleComesBackWithTheSameBody) {
  AppRig rig(Mode::echo);
  Client& c = rig[0];
  const std::string msg = c.peer->order("E1");
  rig.feed(c, msg);
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "D");
  const auto body = [](const std::string& raw) {
    const auto from = raw.find(
        "\x01"
        "11=");
    const auto to = raw.rfind(
        "\x01"
        "10=");
    return raw.substr(from, to - from);
  };
  EXPECT_EQ(body(out[0].raw), body(msg));
  EXPECT_EQ(out[0].get(tag::SenderCompID), "KITE");
}

TEST(EchoMode, securityDefinitionIsEchoed) {
  AppRig rig(Mode::echo);
  Client& c = rig[0];
  rig.feed(c, c.peer->make("d", [](codec::MessageWriter& w) {
    w.add_string(tag::SecurityReqID, "Q1");
    w.add_string(tag::SecurityResponseID, "R1");
    w.add_uint(tag::SecurityResponseType, 1);
    w.add_string(tag::Symbol, "KITE");
  }));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "d");
  EXPECT_EQ(out[0].get(tag::SecurityResponseID), "R1");
}

TEST(EchoMode, possResendOfAnOrderAlreadySeenIsDroppedButANewOneIsEchoed) {
  AppRig rig(Mode::echo);
  Client& c = rig[0];
  rig.feed(c, c.peer->order("E1"));
  ASSERT_EQ(c.wire.take().size(), 1u);
  const auto resend = [&](std::string_view cl) {
    return c.peer->make("D", [&](codec::MessageWriter& w) {
      w.add_bool(tag::PossResend, true);
      w.add_string(tag::ClOrdID, cl);
      w.add_string(tag::Symbol, "KITE");
      w.add_char(tag::Side, '1');
      w.add_uint(tag::OrderQty, 1);
      w.add_char(tag::OrdType, '1');
    });
  };
  rig.feed(c, resend("E1"));
  EXPECT_TRUE(c.wire.take().empty());
  EXPECT_EQ(rig[0].app->stats().dropped_resends, 1u);
  rig.feed(c, resend("E2"));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::ClOrdID), "E2");
}

// A PossResend=Y NewOrderSingle from client c.
std::string possible_resend(Client& c, std::string_view cl) {
  return c.peer->make("D", [&](codec::MessageWriter& w) {
    w.add_bool(tag::PossResend, true);
    w.add_string(tag::ClOrdID, cl);
    w.add_string(tag::Symbol, "KITE");
    w.add_char(tag::Side, '1');
    w.add_uint(tag::OrderQty, 1);
    w.add_char(tag::OrdType, '1');
  });
}

TEST(EchoMode, echoOfAPossResendOrderCarriesPossResend) {
  AppRig rig(Mode::echo);
  Client& c = rig[0];
  rig.feed(c, possible_resend(c, "PR1"));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::ClOrdID), "PR1");
  EXPECT_EQ(out[0].get(tag::PossResend), "Y");
  rig.feed(c, c.peer->order("PR2"));
  out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].has(tag::PossResend));
}

TEST(EchoMode, clOrdIdsSeenAreForgottenWhenTheSessionEnds) {
  AppRig rig(Mode::echo);
  Client& c = rig[0];
  rig.feed(c, c.peer->order("E1"));
  ASSERT_EQ(c.wire.take().size(), 1u);
  rig.feed(c, c.peer->make("5"));  // the peer logs out: the session ends
  ASSERT_FALSE(c.session->logged_on());
  c.conn->on_disconnected("test", rig.clock.now_ns());
  c.wire.take();
  // A new connection and Logon: the same ClOrdID sent as a possible resend is new again.
  c.conn = std::make_unique<link::SessionConnection>(rig.registry, link::AcceptorLimits{});
  c.conn->on_connected(c.wire, rig.clock.now_ns());
  rig.feed(c, c.peer->logon());
  ASSERT_TRUE(c.session->logged_on());
  c.wire.take();
  rig.feed(c, possible_resend(c, "E1"));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::ClOrdID), "E1");
  EXPECT_EQ(rig[0].app->stats().dropped_resends, 0u);
}

TEST(EchoMode, otherApplicationMessagesGetBusinessMessageReject) {
  AppRig rig(Mode::echo);
  Client& c = rig[0];
  rig.feed(c, c.peer->make("F", [](codec::MessageWriter& w) {
    w.add_string(tag::OrigClOrdID, "E1");
    w.add_string(tag::ClOrdID, "E2");
  }));
  auto out = c.wire.take();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), "j");
  EXPECT_EQ(out[0].get(tag::RefMsgType), "F");
  EXPECT_EQ(out[0].get(tag::BusinessRejectReason), "3");
}

TEST(Modes, parseAndNameEachOther) {
  for (Mode m : {Mode::ack, Mode::match, Mode::echo}) {
    Mode back = Mode::ack;
    ASSERT_TRUE(parse_mode(to_string(m), back));
    EXPECT_EQ(back, m);
  }
  Mode x;
  EXPECT_FALSE(parse_mode("fill", x));
}

// "C7" (built by appending: GCC 12 warns falsely on "C" + std::to_string(i)).
std::string id(char prefix, int i) {
  std::string s(1, prefix);
  s += std::to_string(i);
  return s;
}

// Lossless back-pressure: a slow reader gets every report, once and in order.
// The wire takes only a little at a time (like a full send buffer the peer
// drains slowly); the test plays the runtime: it keeps the bytes on_data()
// did not consume and offers them again when room returns.
std::vector<Sent> stream_under_back_pressure(AppRig& rig, const std::string& orders, int& rounds) {
  Client& c = rig[0];
  std::string pending = orders;
  std::vector<Sent> got;
  c.wire.room = 0;  // full at first: nothing may be handled
  EXPECT_EQ(c.conn->on_data(pending.data(), pending.size(), rig.clock.now_ns()), 0u);
  for (rounds = 0; rounds < 10000 && !pending.empty(); ++rounds) {
    c.wire.room = 2 * 8192 + 600;  // the reply reserve (2 x SendClaimBytes) and a few reports more
    const std::size_t used = c.conn->on_data(pending.data(), pending.size(), rig.clock.now_ns());
    pending.erase(0, used);
    for (Sent& m : c.wire.take()) got.push_back(std::move(m));
  }
  EXPECT_TRUE(pending.empty());
  return got;
}

std::string order_bytes(AppRig& rig, const std::string& cl, char side) {
  return rig[0].peer->make("D", [&](codec::MessageWriter& w) {
    w.add_string(tag::ClOrdID, cl);
    w.add_string(tag::Symbol, "KITE");
    w.add_char(tag::Side, side);
    w.add_timestamp(tag::TransactTime, rig.clock.now_ns());
    w.add_int(tag::OrderQty, 100);
    w.add_char(tag::OrdType, '2');
    w.add_string(tag::Price, "10.5");
  });
}

// The room the back-pressure check claims serves an order's first report;
// a second report (a fill after the ack) claims afresh, after the commit.
TEST(BackPressure, anOrdersFirstReportUsesTheRoomItsCheckClaimed) {
  AppRig rig(Mode::match);
  Client& c = rig[0];
  c.wire.claims = 0;
  auto out = rig.order(0, "B1", '1', 100, "10");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].get(tag::ClOrdID), "B1");
  EXPECT_EQ(c.wire.claims, 1);
  c.wire.claims = 0;
  out = rig.order(0, "S1", '2', 100, "10");
  ASSERT_EQ(out.size(), 3u);  // the sell's New and fill, the buy's fill
  std::map<std::string, int> per_id;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ++per_id[out[i].get(tag::ClOrdID) + "/" + out[i].get(tag::ExecType)];
    EXPECT_EQ(out[i].seq(), 3u + i);
  }
  EXPECT_EQ(per_id["S1/0"], 1);
  EXPECT_EQ(per_id["S1/F"], 1);
  EXPECT_EQ(per_id["B1/F"], 1);
  EXPECT_EQ(c.wire.claims, 3);
}

TEST(BackPressure, ackModeAnswersEveryOrderOnceInOrderWhenRoomReturns) {
  AppRig rig(Mode::ack);
  constexpr int kOrders = 50;
  std::string orders;
  for (int i = 0; i < kOrders; ++i) orders += order_bytes(rig, id('C', i), '1');
  int rounds = 0;
  const std::vector<Sent> got = stream_under_back_pressure(rig, orders, rounds);
  EXPECT_GT(rounds, 5);  // it really was held back
  ASSERT_EQ(got.size(), static_cast<std::size_t>(kOrders));
  for (int i = 0; i < kOrders; ++i) {
    EXPECT_EQ(got[static_cast<std::size_t>(i)].type(), "8");
    EXPECT_EQ(got[static_cast<std::size_t>(i)].get(tag::ClOrdID), id('C', i));
    EXPECT_EQ(got[static_cast<std::size_t>(i)].seq(), 2u + static_cast<std::uint64_t>(i));
  }
  EXPECT_EQ(rig[0].app->stats().send_failures, 0u);
  EXPECT_EQ(rig[0].session->next_target_seq(), 2u + kOrders);
  EXPECT_FALSE(rig[0].wire.closed);
}

TEST(BackPressure, matchModeDeliversBothFillsOfEveryCrossOnce) {
  AppRig rig(Mode::match);
  constexpr int kPairs = 20;
  std::string orders;
  for (int i = 0; i < kPairs; ++i) {
    orders += order_bytes(rig, id('B', i), '1');
    orders += order_bytes(rig, id('S', i), '2');
  }
  int rounds = 0;
  const std::vector<Sent> got = stream_under_back_pressure(rig, orders, rounds);
  EXPECT_GT(rounds, 5);
  // Per pair: the buy's New, then the sell's New and fill, and the buy's fill.
  ASSERT_EQ(got.size(), static_cast<std::size_t>(4 * kPairs));
  std::map<std::string, int> per_id;
  for (const Sent& m : got) ++per_id[m.get(tag::ClOrdID) + "/" + m.get(tag::ExecType)];
  for (int i = 0; i < kPairs; ++i) {
    EXPECT_EQ(per_id[id('B', i) + "/0"], 1);
    EXPECT_EQ(per_id[id('S', i) + "/0"], 1);
    EXPECT_EQ(per_id[id('S', i) + "/F"] + per_id[id('S', i) + "/2"], 1);
    EXPECT_EQ(per_id[id('B', i) + "/F"] + per_id[id('B', i) + "/2"], 1);
  }
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].seq(), 2u + i);
  EXPECT_EQ(rig[0].app->stats().send_failures, 0u);
}

}  // namespace
}  // namespace kite::app::test
