// An acceptor with N sessions (PEER1..PEERn talking to KITE), each with its
// own OrderApplication and link connection, driven by the link's and the
// session layer's test doubles (scripted Peer, FakeWire, fake clock).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kite/app/order_app.hpp"
#include "support/link_testing.hpp"

namespace kite::app::test {

using link::test::FakeWire;
using session::test::Peer;
using session::test::Sent;
namespace tag = codec::tag;

struct Client {
  std::unique_ptr<OrderApplication> app;
  session::Session* session = nullptr;
  std::unique_ptr<Peer> peer;
  FakeWire wire;
  std::unique_ptr<link::SessionConnection> conn;
};

class AppRig {
 public:
  // send_claim_bytes: SendClaimBytes (0: the default); first_id: the first OrderID.
  explicit AppRig(Mode mode, int sessions = 1, std::string begin = "FIX.4.4", std::size_t send_claim_bytes = 0,
                  std::uint64_t first_id = 1000)
      : registry(clock, log), ids(first_id) {
    for (int i = 1; i <= sessions; ++i) {
      auto c = std::make_unique<Client>();
      session::SessionSettings s;
      s.role = session::Role::acceptor;
      s.begin_string = begin;
      s.sender_comp_id = "KITE";
      s.target_comp_id = "PEER" + std::to_string(i);
      s.store.kind = session::StoreKind::memory;
      if (send_claim_bytes != 0) s.send_claim_bytes = send_claim_bytes;
      c->app = std::make_unique<OrderApplication>(mode, ids, &exchange);
      c->session = &registry.add(s, *c->app);
      c->peer = std::make_unique<Peer>(clock, begin, s.target_comp_id, "KITE");
      c->conn = std::make_unique<link::SessionConnection>(registry, link::AcceptorLimits{});
      c->conn->on_connected(c->wire, clock.now_ns());
      clients.push_back(std::move(c));
    }
    for (auto& c : clients) {
      feed(*c, c->peer->logon());
      c->wire.take();
    }
  }
  void feed(Client& c, const std::string& bytes) { c.conn->on_data(bytes.data(), bytes.size(), clock.now_ns()); }
  Client& operator[](int i) { return *clients[static_cast<std::size_t>(i)]; }

  // A NewOrderSingle from client i; returns what that client's wire got.
  std::vector<Sent> order(int i, std::string_view cl, char side, std::int64_t qty, std::string_view price,
                          char ord_type = '2', std::string_view symbol = "KITE") {
    Client& c = *clients[static_cast<std::size_t>(i)];
    feed(c, c.peer->make("D", [&](codec::MessageWriter& w) {
      w.add_string(tag::ClOrdID, cl);
      w.add_string(tag::Symbol, symbol);
      w.add_char(tag::Side, side);
      w.add_timestamp(tag::TransactTime, clock.now_ns());
      w.add_int(tag::OrderQty, qty);
      w.add_char(tag::OrdType, ord_type);
      if (!price.empty()) w.add_string(tag::Price, price);
    }));
    return c.wire.take();
  }
  std::vector<Sent> cancel(int i, std::string_view cl, std::string_view orig) {
    Client& c = *clients[static_cast<std::size_t>(i)];
    feed(c, c.peer->make("F", [&](codec::MessageWriter& w) {
      w.add_string(tag::OrigClOrdID, orig);
      w.add_string(tag::ClOrdID, cl);
      w.add_string(tag::Symbol, "KITE");
      w.add_char(tag::Side, '1');
      w.add_timestamp(tag::TransactTime, clock.now_ns());
    }));
    return c.wire.take();
  }
  std::vector<Sent> replace(int i, std::string_view cl, std::string_view orig, std::int64_t qty,
                            std::string_view price) {
    Client& c = *clients[static_cast<std::size_t>(i)];
    feed(c, c.peer->make("G", [&](codec::MessageWriter& w) {
      w.add_string(tag::OrigClOrdID, orig);
      w.add_string(tag::ClOrdID, cl);
      w.add_char(tag::HandlInst, '1');
      w.add_string(tag::Symbol, "KITE");
      w.add_char(tag::Side, '1');
      w.add_timestamp(tag::TransactTime, clock.now_ns());
      w.add_int(tag::OrderQty, qty);
      w.add_char(tag::OrdType, '2');
      w.add_string(tag::Price, price);
    }));
    return c.wire.take();
  }

  session::FakeClock clock;
  session::MemoryLogger log;
  session::SessionRegistry registry;
  IdSource ids;
  Exchange exchange;
  std::vector<std::unique_ptr<Client>> clients;
};

}  // namespace kite::app::test
