#include <algorithm>

#include "kite/app/order_app.hpp"

namespace kite::app {

namespace {
bool crosses(const BookOrder& in, std::int64_t resting_px) noexcept {
  if (in.market) return true;
  return in.side == Side::buy ? resting_px <= in.price : resting_px >= in.price;
}

template <class Side>
BookOrder match_side(Side& levels, std::unordered_map<std::uint64_t, BookOrder>& orders, BookOrder o,
                     std::vector<Fill>& fills) {
  while (o.leaves > 0 && !levels.empty()) {
    auto lvl = levels.begin();
    if (!crosses(o, lvl->first)) break;
    auto& q = lvl->second;
    while (o.leaves > 0 && !q.empty()) {
      BookOrder& r = orders.at(q.front());
      const std::int64_t n = std::min(o.leaves, r.leaves);
      const std::int64_t px = r.price;  // the resting order sets the price
      r.leaves -= n;
      r.cum += n;
      r.notional += n * px;
      o.leaves -= n;
      o.cum += n;
      o.notional += n * px;
      fills.push_back({r.order_id, px, n, r});
      if (r.leaves == 0) {
        orders.erase(r.order_id);
        q.pop_front();
      }
    }
    if (q.empty()) levels.erase(lvl);
  }
  return o;
}
}  // namespace

BookOrder OrderBook::match(BookOrder o, std::vector<Fill>& fills) {
  return o.side == Side::buy ? match_side(asks_, orders_, o, fills) : match_side(bids_, orders_, o, fills);
}

void OrderBook::rest(const BookOrder& o) {
  orders_[o.order_id] = o;
  if (o.side == Side::buy)
    bids_[o.price].push_back(o.order_id);
  else
    asks_[o.price].push_back(o.order_id);
}

void OrderBook::unlink(const BookOrder& o) {
  const auto drop = [&](auto& levels) {
    auto lvl = levels.find(o.price);
    if (lvl == levels.end()) return;
    auto& q = lvl->second;
    q.erase(std::remove(q.begin(), q.end(), o.order_id), q.end());
    if (q.empty()) levels.erase(lvl);
  };
  if (o.side == Side::buy)
    drop(bids_);
  else
    drop(asks_);
}

BookOrder OrderBook::add(const BookOrder& incoming, std::vector<Fill>& fills) {
  BookOrder o = match(incoming, fills);
  if (o.leaves > 0 && !o.market) rest(o);
  return o;
}

const BookOrder* OrderBook::find(std::uint64_t order_id) const noexcept {
  auto it = orders_.find(order_id);
  return it == orders_.end() ? nullptr : &it->second;
}

bool OrderBook::cancel(std::uint64_t order_id, BookOrder* removed) {
  auto it = orders_.find(order_id);
  if (it == orders_.end()) return false;
  unlink(it->second);
  if (removed != nullptr) *removed = it->second;
  orders_.erase(it);
  return true;
}

bool OrderBook::replace(std::uint64_t order_id, std::int64_t new_qty, std::int64_t new_price, std::vector<Fill>& fills,
                        BookOrder* after) {
  auto it = orders_.find(order_id);
  if (it == orders_.end() || new_qty <= it->second.cum) return false;
  BookOrder& r = it->second;
  const bool keep_priority = new_price == r.price && new_qty <= r.qty;
  if (keep_priority) {
    r.qty = new_qty;
    r.leaves = new_qty - r.cum;
    if (after != nullptr) *after = r;
    return true;
  }
  BookOrder o = r;
  unlink(r);
  orders_.erase(it);
  o.qty = new_qty;
  o.leaves = new_qty - o.cum;
  o.price = new_price;
  o = add(o, fills);
  if (after != nullptr) *after = o;
  return true;
}

bool OrderBook::best_bid(std::int64_t& px) const noexcept {
  if (bids_.empty()) return false;
  px = bids_.begin()->first;
  return true;
}

bool OrderBook::best_ask(std::int64_t& px) const noexcept {
  if (asks_.empty()) return false;
  px = asks_.begin()->first;
  return true;
}

std::vector<std::uint64_t> OrderBook::level(Side side, std::int64_t price) const {
  if (side == Side::buy) {
    auto it = bids_.find(price);
    if (it != bids_.end()) return {it->second.begin(), it->second.end()};
  } else {
    auto it = asks_.find(price);
    if (it != asks_.end()) return {it->second.begin(), it->second.end()};
  }
  return {};
}

}  // namespace kite::app
