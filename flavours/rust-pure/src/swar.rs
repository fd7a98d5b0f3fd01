//! Byte scans a word at a time (SWAR), each with its plain scalar twin; the
//! tests hold the two to the same answers.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The first position at or after `from` where `hay` holds `byte`.
#[inline(always)]
pub fn find(hay: &[u8], from: usize, byte: u8) -> Option<usize> {
    let pattern = LO.wrapping_mul(byte as u64);
    let mut i = from;
    while i + 8 <= hay.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&hay[i..i + 8]);
        let x = u64::from_le_bytes(word) ^ pattern;
        // A byte of x is zero where hay matches; the lowest flagged byte is exact
        // (borrows only run upwards from a real zero).
        let hits = x.wrapping_sub(LO) & !x & HI;
        if hits != 0 {
            return Some(i + (hits.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    find_scalar(hay, i, byte)
}

/// The scalar twin of `find`.
#[inline]
pub fn find_scalar(hay: &[u8], from: usize, byte: u8) -> Option<usize> {
    let mut i = from;
    while i < hay.len() {
        if hay[i] == byte {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// The FIX CheckSum of `bytes`: their sum modulo 256 (the loop vectorizes).
#[inline]
pub fn checksum(bytes: &[u8]) -> u8 {
    let mut sum: u32 = 0;
    for &b in bytes {
        sum = sum.wrapping_add(b as u32);
    }
    sum as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrand::Rand;

    #[test]
    fn find_agrees_with_its_scalar_twin_on_random_buffers() {
        let mut r = Rand::new(7);
        for _ in 0..2000 {
            let len = r.below(80) as usize;
            // A small alphabet so that matches, near-matches (0x81, 0x3c/0x3e) and high bytes are common.
            let alphabet = [b'=', 1u8, b'0', 0x80, 0x81, 0xff, 0x3c, 0x3e, 0x00, 0x02];
            let hay: Vec<u8> = (0..len).map(|_| alphabet[r.below(alphabet.len() as u64) as usize]).collect();
            for from in 0..=len {
                for &b in &[b'=', 1u8, 0x80, 0x00] {
                    assert_eq!(find(&hay, from, b), find_scalar(&hay, from, b), "{:?} from {} byte {}", hay, from, b);
                }
            }
        }
    }

    #[test]
    fn find_sees_a_match_at_every_word_position() {
        for len in 1..40 {
            for at in 0..len {
                let mut hay = vec![b'A'; len];
                hay[at] = 1;
                assert_eq!(find(&hay, 0, 1), Some(at));
                assert_eq!(find(&hay, at + 1, 1), None);
            }
        }
    }

    #[test]
    fn checksum_is_the_byte_sum_modulo_256() {
        assert_eq!(checksum(b""), 0);
        assert_eq!(checksum(&[255, 2]), 1);
        let big = vec![0xffu8; 70_000];
        assert_eq!(checksum(&big) as u32, (70_000u32 * 255) % 256);
    }
}
