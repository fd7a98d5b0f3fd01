// The step the block walks share (mask_walk.hpp, avx512_walk.hpp): where the
// tags of a 64-byte block start and end, from its SOH and digit bits.
#pragma once

#include <cstdint>

namespace kite::codec::detail {

// A tag starts after each SOH (soh_carry brings the last block's top SOH in;
// 1 before the first block, for begin). Adding the starts to the digit bits
// carries through each run of digits that begins at a start, so the bits of
// sum_bits off the digits mark every tag's end; run_carry takes a run across
// blocks. Returns the starts within valid.
[[gnu::always_inline]] inline std::uint64_t block_tag_starts(std::uint64_t soh, std::uint64_t digit,
                                                             std::uint64_t valid, std::uint64_t& soh_carry,
                                                             std::uint64_t& run_carry,
                                                             std::uint64_t& sum_bits) noexcept {
  const std::uint64_t starts = ((soh << 1) | soh_carry) & valid;
  soh_carry = soh >> 63;
  std::uint64_t partial;
  const bool c = __builtin_add_overflow(digit, starts, &partial);
  const bool c2 = __builtin_add_overflow(partial, run_carry, &sum_bits);
  run_carry = static_cast<std::uint64_t>(c | c2);
  return starts;
}

}  // namespace kite::codec::detail
