//! FIX tag=value codec: framing, the indexed walk, typed reads and the encoder.
//! It knows nothing of sockets, threads or sessions.

use crate::swar;

pub const SOH: u8 = 1;
pub const BEGIN_STRING: &[u8] = b"FIX.4.4";
/// The longest frame accepted (a receive buffer holds at least one).
pub const MAX_FRAME: usize = 16 * 1024;
/// Fields indexed per frame; a frame with more is invalid.
pub const MAX_FIELDS: usize = 192;
/// Tags below this are found in O(1) from the index.
const DIRECT_TAGS: usize = 160;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameError {
    NoBeginString,
    BadBodyLength,
    TooLong,
    BadTrailer,
}

impl FrameError {
    pub fn text(self) -> &'static str {
        match self {
            FrameError::NoBeginString => "frame does not start with 8=FIX.4.4",
            FrameError::BadBodyLength => "BodyLength(9) missing or not a number",
            FrameError::TooLong => "frame longer than the engine accepts",
            FrameError::BadTrailer => "BodyLength(9) does not end at CheckSum(10)",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A whole frame of this many bytes whose CheckSum is right; its body
    /// (from MsgType to the SOH before CheckSum) is `body_start..size - 7`.
    Complete { size: usize, body_start: usize },
    /// Framed right but its CheckSum is wrong: skip `size` bytes.
    Garbled { size: usize },
    /// More bytes needed.
    Incomplete,
    /// Not FIX: nothing after this can be framed.
    Invalid(FrameError),
}

const PREFIX: &[u8] = b"8=FIX.4.4\x019=";

/// Frames the start of `buf`: tells an incomplete frame from an invalid one
/// without reading past the frame.
pub fn frame(buf: &[u8]) -> Frame {
    let known = buf.len().min(PREFIX.len());
    if buf[..known] != PREFIX[..known] {
        return Frame::Invalid(FrameError::NoBeginString);
    }
    let mut i = PREFIX.len();
    let mut body_len: usize = 0;
    loop {
        if i >= buf.len() {
            return Frame::Incomplete;
        }
        let c = buf[i];
        if c == SOH {
            break;
        }
        if !c.is_ascii_digit() || i - PREFIX.len() >= 6 {
            return Frame::Invalid(FrameError::BadBodyLength);
        }
        body_len = body_len * 10 + (c - b'0') as usize;
        i += 1;
    }
    if i == PREFIX.len() {
        return Frame::Invalid(FrameError::BadBodyLength);
    }
    let body_start = i + 1;
    let trailer = body_start + body_len;
    let size = trailer + 7;
    if size > MAX_FRAME {
        return Frame::Invalid(FrameError::TooLong);
    }
    if buf.len() < size {
        return Frame::Incomplete;
    }
    let t = &buf[trailer..size];
    if body_len == 0 || buf[trailer - 1] != SOH || &t[..3] != b"10=" || t[6] != SOH || !t[3..6].iter().all(|c| c.is_ascii_digit()) {
        return Frame::Invalid(FrameError::BadTrailer);
    }
    let stated = (t[3] - b'0') as u32 * 100 + (t[4] - b'0') as u32 * 10 + (t[5] - b'0') as u32;
    if stated != swar::checksum(&buf[..trailer]) as u32 {
        return Frame::Garbled { size };
    }
    Frame::Complete { size, body_start }
}

/// One field: tag and the value's place in the frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Field {
    pub tag: u32,
    pub start: u32,
    pub end: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalkError {
    /// A tag that is empty, not a number, or not followed by '='.
    BadTag { at: usize },
    /// A tag with an empty value.
    EmptyValue { tag: u32 },
    TooManyFields,
}

/// The fields of one frame in order, with O(1) look-up of tags below 160.
/// Reset is O(1): a generation number marks the look-up table's live entries.
pub struct Index {
    fields: [Field; MAX_FIELDS],
    n: usize,
    generation: u32,
    seen: [u32; DIRECT_TAGS],
    slot: [u8; DIRECT_TAGS],
}

impl Default for Index {
    fn default() -> Self {
        Index { fields: [Field::default(); MAX_FIELDS], n: 0, generation: 0, seen: [0; DIRECT_TAGS], slot: [0; DIRECT_TAGS] }
    }
}

impl Index {
    pub fn fields(&self) -> &[Field] {
        &self.fields[..self.n]
    }

    /// The first field with `tag`.
    #[inline]
    pub fn find(&self, tag: u32) -> Option<Field> {
        if (tag as usize) < DIRECT_TAGS {
            let t = tag as usize;
            if self.seen[t] == self.generation {
                Some(self.fields[self.slot[t] as usize])
            } else {
                None
            }
        } else {
            self.fields().iter().find(|f| f.tag == tag).copied()
        }
    }

    fn reset(&mut self) {
        self.n = 0;
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.seen = [0; DIRECT_TAGS];
            self.generation = 1;
        }
    }

    #[inline(always)]
    fn push(&mut self, f: Field) -> Result<(), WalkError> {
        if self.n == MAX_FIELDS {
            return Err(WalkError::TooManyFields);
        }
        let t = f.tag as usize;
        if t < DIRECT_TAGS && self.seen[t] != self.generation {
            self.seen[t] = self.generation;
            self.slot[t] = self.n as u8;
        }
        self.fields[self.n] = f;
        self.n += 1;
        Ok(())
    }
}

/// Indexes the body `frame[body_start..body_end]` (body_end: just after the SOH
/// before CheckSum) in one pass, with the SWAR scans.
pub fn walk(frame: &[u8], body_start: usize, body_end: usize, ix: &mut Index) -> Result<(), WalkError> {
    walk_with(frame, body_start, body_end, ix, swar::find)
}

/// The scalar twin of `walk`.
pub fn walk_scalar(frame: &[u8], body_start: usize, body_end: usize, ix: &mut Index) -> Result<(), WalkError> {
    walk_with(frame, body_start, body_end, ix, swar::find_scalar)
}

#[inline(always)]
fn walk_with(
    frame: &[u8],
    body_start: usize,
    body_end: usize,
    ix: &mut Index,
    find: impl Fn(&[u8], usize, u8) -> Option<usize>,
) -> Result<(), WalkError> {
    ix.reset();
    // The scans may look past body_end into the trailer: every hit is checked.
    let body = &frame[..body_end];
    let mut at = body_start;
    while at < body_end {
        let eq = match find(frame, at, b'=') {
            Some(e) if e < body_end && e > at && e - at <= 9 => e,
            _ => return Err(WalkError::BadTag { at }),
        };
        let mut tag: u32 = 0;
        for &c in &frame[at..eq] {
            if !c.is_ascii_digit() {
                return Err(WalkError::BadTag { at });
            }
            tag = tag * 10 + (c - b'0') as u32;
        }
        // The body ends with SOH, so a SOH is always found before body_end.
        let soh = find(body, eq + 1, SOH).unwrap_or(body_end);
        if soh == eq + 1 {
            return Err(WalkError::EmptyValue { tag });
        }
        ix.push(Field { tag, start: (eq + 1) as u32, end: soh as u32 })?;
        at = soh + 1;
    }
    Ok(())
}

/// The value of a field.
#[inline(always)]
pub fn value(frame: &[u8], f: Field) -> &[u8] {
    &frame[f.start as usize..f.end as usize]
}

pub mod tag {
    pub const ACCOUNT: u32 = 1;
    pub const AVG_PX: u32 = 6;
    pub const BEGIN_SEQ_NO: u32 = 7;
    pub const CL_ORD_ID: u32 = 11;
    pub const CUM_QTY: u32 = 14;
    pub const END_SEQ_NO: u32 = 16;
    pub const EXEC_ID: u32 = 17;
    pub const MSG_SEQ_NUM: u32 = 34;
    pub const MSG_TYPE: u32 = 35;
    pub const NEW_SEQ_NO: u32 = 36;
    pub const ORDER_ID: u32 = 37;
    pub const ORDER_QTY: u32 = 38;
    pub const ORD_STATUS: u32 = 39;
    pub const ORD_TYPE: u32 = 40;
    pub const POSS_DUP_FLAG: u32 = 43;
    pub const PRICE: u32 = 44;
    pub const REF_SEQ_NUM: u32 = 45;
    pub const SENDER_COMP_ID: u32 = 49;
    pub const SENDING_TIME: u32 = 52;
    pub const SIDE: u32 = 54;
    pub const SYMBOL: u32 = 55;
    pub const TARGET_COMP_ID: u32 = 56;
    pub const TEXT: u32 = 58;
    pub const TRANSACT_TIME: u32 = 60;
    pub const ENCRYPT_METHOD: u32 = 98;
    pub const HEART_BT_INT: u32 = 108;
    pub const TEST_REQ_ID: u32 = 112;
    pub const GAP_FILL_FLAG: u32 = 123;
    pub const RESET_SEQ_NUM_FLAG: u32 = 141;
    pub const EXEC_TYPE: u32 = 150;
    pub const LEAVES_QTY: u32 = 151;
    pub const REF_TAG_ID: u32 = 371;
    pub const REF_MSG_TYPE: u32 = 372;
    pub const SESSION_REJECT_REASON: u32 = 373;
    pub const BUSINESS_REJECT_REASON: u32 = 380;
}

/// The standard header, read from the index.
#[derive(Debug, Clone, Copy)]
pub struct Header<'a> {
    pub msg_type: &'a [u8],
    pub seq: u64,
    pub sender: &'a [u8],
    pub target: &'a [u8],
    pub poss_dup: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// MsgType(35) is not the first field of the body.
    MsgTypeNotFirst,
    /// A required header field (the tag) is missing or malformed.
    Missing(u32),
}

/// Reads the header from an indexed frame.
#[inline]
pub fn read_header<'a>(frame: &'a [u8], ix: &Index) -> Result<Header<'a>, HeaderError> {
    let first = match ix.fields().first() {
        Some(f) if f.tag == tag::MSG_TYPE => *f,
        _ => return Err(HeaderError::MsgTypeNotFirst),
    };
    let get = |t: u32| ix.find(t).map(|f| value(frame, f)).ok_or(HeaderError::Missing(t));
    let seq = uint(get(tag::MSG_SEQ_NUM)?).ok_or(HeaderError::Missing(tag::MSG_SEQ_NUM))?;
    let sender = get(tag::SENDER_COMP_ID)?;
    let target = get(tag::TARGET_COMP_ID)?;
    get(tag::SENDING_TIME)?;
    let poss_dup = ix.find(tag::POSS_DUP_FLAG).map_or(false, |f| value(frame, f) == b"Y");
    Ok(Header { msg_type: value(frame, first), seq, sender, target, poss_dup })
}

/// An unsigned decimal integer of at most 18 digits.
#[inline]
pub fn uint(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 18 {
        return None;
    }
    let mut n: u64 = 0;
    for &c in v {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n * 10 + (c - b'0') as u64;
    }
    Some(n)
}

/// A fixed-point decimal: mantissa x 10^-scale. Prices and quantities are
/// never floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    pub mantissa: i64,
    pub scale: u8,
}

/// Reads "-12.340" and the like (at most 18 digits, one optional point).
#[inline]
pub fn decimal(v: &[u8]) -> Option<Decimal> {
    let (negative, digits) = match v.first() {
        Some(b'-') => (true, &v[1..]),
        _ => (false, v),
    };
    if digits.is_empty() {
        return None;
    }
    let mut m: i64 = 0;
    let mut scale: Option<u8> = None;
    let mut count = 0;
    for &c in digits {
        if c == b'.' {
            if scale.is_some() {
                return None;
            }
            scale = Some(0);
            continue;
        }
        if !c.is_ascii_digit() {
            return None;
        }
        count += 1;
        if count > 18 {
            return None;
        }
        m = m * 10 + (c - b'0') as i64;
        if let Some(s) = scale.as_mut() {
            *s += 1;
        }
    }
    if count == 0 {
        return None;
    }
    Some(Decimal { mantissa: if negative { -m } else { m }, scale: scale.unwrap_or(0) })
}

const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

const POW10: [u64; 20] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
    10_000_000_000_000_000_000,
];

/// The number of decimal digits of `n`: log2 times log10(2) (1233/4096),
/// corrected by one comparison.
#[inline(always)]
pub fn digits(n: u64) -> usize {
    let v = n | 1;
    let bits = 64 - v.leading_zeros() as usize;
    let t = (bits * 1233) >> 12;
    t + 1 - (v < POW10[t]) as usize
}

/// Writes `n` in decimal at the start of `out`, which holds at least 20
/// bytes; returns the digits written. Two digits per step, from the end.
#[inline(always)]
pub fn put_uint(out: &mut [u8], mut n: u64) -> usize {
    let out = &mut out[..20];
    let len = digits(n);
    let mut i = len;
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        out[i - 2] = PAIRS[pair];
        out[i - 1] = PAIRS[pair + 1];
        i -= 2;
    }
    if n >= 10 {
        let pair = n as usize * 2;
        out[i - 2] = PAIRS[pair];
        out[i - 1] = PAIRS[pair + 1];
    } else {
        out[i - 1] = b'0' + n as u8;
    }
    len
}

/// Copies `src` to the start of `dst` (at least as long). Fields are short:
/// up to 16 bytes move as two overlapping words, without a call to memcpy.
#[inline(always)]
pub fn put_bytes(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    if n > 16 || dst.len() < 16 {
        dst[..n].copy_from_slice(src);
    } else if n >= 8 {
        let mut a = [0u8; 8];
        let mut b = [0u8; 8];
        a.copy_from_slice(&src[..8]);
        b.copy_from_slice(&src[n - 8..n]);
        dst[n - 8..n].copy_from_slice(&b);
        dst[..8].copy_from_slice(&a);
    } else if n >= 4 {
        let mut a = [0u8; 4];
        let mut b = [0u8; 4];
        a.copy_from_slice(&src[..4]);
        b.copy_from_slice(&src[n - 4..n]);
        dst[n - 4..n].copy_from_slice(&b);
        dst[..4].copy_from_slice(&a);
    } else {
        // Under 4 bytes: a loop, which copy_from_slice would turn into a memcpy call.
        #[allow(clippy::manual_memcpy)]
        for i in 0..n {
            dst[i] = src[i];
        }
    }
}

/// The first bytes of every outbound body after MsgType, rendered once per
/// session: "49=KITE<SOH>56=BENCH0<SOH>34=".
pub struct HeaderTemplate {
    bytes: [u8; 96],
    len: usize,
}

impl HeaderTemplate {
    pub fn new(sender: &[u8], target: &[u8]) -> HeaderTemplate {
        let mut t = HeaderTemplate { bytes: [0; 96], len: 0 };
        let parts: [&[u8]; 5] = [b"49=", sender, b"\x0156=", target, b"\x0134="];
        for p in parts.iter() {
            let n = p.len().min(t.bytes.len() - t.len);
            t.bytes[t.len..t.len + n].copy_from_slice(&p[..n]);
            t.len += n;
        }
        t
    }
    pub fn bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Room reserved before the body for "8=FIX.4.4<SOH>9=NNN<SOH>": a body of
/// 100-999 bytes needs no move.
const RESERVED: usize = PREFIX.len() + 3 + 1;

/// Writes one message into a buffer it is handed: the body first, after room
/// for BeginString and BodyLength, which `finish` then writes in place.
pub struct Writer<'a> {
    buf: &'a mut [u8],
    pos: usize,
    overflow: bool,
}

impl<'a> Writer<'a> {
    /// Starts a message of `msg_type`, numbered `seq`, sent at `sending_time`.
    #[inline]
    pub fn begin(buf: &'a mut [u8], msg_type: &[u8], seq: u64, sending_time: &[u8], h: &HeaderTemplate) -> Writer<'a> {
        let mut w = Writer { buf, pos: RESERVED, overflow: false };
        w.raw(b"35=");
        w.raw(msg_type);
        w.raw(b"\x01");
        w.raw(h.bytes());
        w.raw_uint(seq);
        w.raw(b"\x0152=");
        w.raw(sending_time);
        w.raw(b"\x01");
        w
    }

    #[inline(always)]
    fn raw(&mut self, b: &[u8]) {
        let end = self.pos + b.len();
        if end > self.buf.len() {
            self.overflow = true;
            return;
        }
        put_bytes(&mut self.buf[self.pos..], b);
        self.pos = end;
    }

    #[inline(always)]
    fn raw_uint(&mut self, n: u64) {
        if self.pos + 20 > self.buf.len() {
            self.overflow = true;
            return;
        }
        self.pos += put_uint(&mut self.buf[self.pos..], n);
    }

    /// Room for a tag, '=', `value` more bytes and SOH, and for put_uint's 20
    /// bytes after the tag; false (and overflow) without.
    #[inline(always)]
    fn room(&mut self, value: usize) -> bool {
        if self.pos + 32 + value > self.buf.len() {
            self.overflow = true;
            return false;
        }
        true
    }

    /// "tag=" without a room check (the caller made room).
    #[inline(always)]
    fn tag_unchecked(&mut self, tag: u32) {
        let n = put_uint(&mut self.buf[self.pos..], tag as u64);
        self.buf[self.pos + n] = b'=';
        self.pos += n + 1;
    }

    #[inline(always)]
    fn tag(&mut self, tag: u32) {
        if self.room(0) {
            self.tag_unchecked(tag);
        }
    }

    #[inline]
    pub fn bytes(&mut self, tag: u32, v: &[u8]) -> &mut Self {
        if self.room(v.len()) {
            self.tag_unchecked(tag);
            put_bytes(&mut self.buf[self.pos..], v);
            self.buf[self.pos + v.len()] = SOH;
            self.pos += v.len() + 1;
        }
        self
    }

    #[inline]
    pub fn uint(&mut self, tag: u32, n: u64) -> &mut Self {
        if self.room(20) {
            self.tag_unchecked(tag);
            self.pos += put_uint(&mut self.buf[self.pos..], n);
            self.buf[self.pos] = SOH;
            self.pos += 1;
        }
        self
    }

    #[inline]
    pub fn char(&mut self, tag: u32, c: u8) -> &mut Self {
        if self.room(1) {
            self.tag_unchecked(tag);
            self.buf[self.pos] = c;
            self.buf[self.pos + 1] = SOH;
            self.pos += 2;
        }
        self
    }

    #[inline]
    pub fn decimal(&mut self, tag: u32, d: Decimal) -> &mut Self {
        self.tag(tag);
        if d.mantissa < 0 {
            self.raw(b"-");
        }
        let m = d.mantissa.unsigned_abs();
        let mut digits = [0u8; 20];
        let n = put_uint(&mut digits, m);
        let scale = d.scale as usize;
        if scale == 0 {
            self.raw(&digits[..n]);
        } else if n > scale {
            self.raw(&digits[..n - scale]);
            self.raw(b".");
            self.raw(&digits[n - scale..n]);
        } else {
            self.raw(b"0.");
            for _ in n..scale {
                self.raw(b"0");
            }
            self.raw(&digits[..n]);
        }
        self.raw(b"\x01");
        self
    }

    /// Writes BeginString and BodyLength in front of the body and CheckSum after
    /// it; returns where the message lies in the buffer, or None when it did not fit.
    #[inline]
    pub fn finish(self) -> Option<(usize, usize)> {
        if self.overflow || self.pos + 7 > self.buf.len() {
            return None;
        }
        let body_len = self.pos - RESERVED;
        let mut digits = [0u8; 20];
        let d = put_uint(&mut digits, body_len as u64);
        let prefix = PREFIX.len() + d + 1;
        let mut end = self.pos;
        let start = if prefix <= RESERVED {
            RESERVED - prefix
        } else {
            // A body of 1000 bytes or more: move it up to make room.
            let shift = prefix - RESERVED;
            if end + shift + 7 > self.buf.len() {
                return None;
            }
            self.buf.copy_within(RESERVED..end, RESERVED + shift);
            end += shift;
            0
        };
        self.buf[start..start + PREFIX.len()].copy_from_slice(PREFIX);
        self.buf[start + PREFIX.len()..start + PREFIX.len() + d].copy_from_slice(&digits[..d]);
        self.buf[start + prefix - 1] = SOH;
        let sum = swar::checksum(&self.buf[start..end]);
        let t = &mut self.buf[end..end + 7];
        t.copy_from_slice(b"10=000\x01");
        t[3] = b'0' + sum / 100;
        t[4] = b'0' + sum / 10 % 10;
        t[5] = b'0' + sum % 10;
        Some((start, end + 7))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testrand::Rand;

    /// A well-formed frame around `body` (which ends with SOH).
    pub fn framed(body: &[u8]) -> Vec<u8> {
        let mut f = format!("8=FIX.4.4\x019={}\x01", body.len()).into_bytes();
        f.extend_from_slice(body);
        let sum = swar::checksum(&f);
        f.extend_from_slice(format!("10={:03}\x01", sum).as_bytes());
        f
    }

    const ORDER: &[u8] = b"35=D\x0149=BENCH0\x0156=KITE\x0134=2\x0152=20261201-10:00:00.000000\x0111=C000000000001\x0121=1\x011=BENCH-ACCOUNT-001\x0155=KITE.XPAR\x0154=1\x0160=20261201-10:00:00.000000\x0138=100\x0140=2\x0144=101.25\x0159=0\x01";

    #[test]
    fn frames_a_whole_message_and_tells_incomplete_from_invalid() {
        let f = framed(ORDER);
        match frame(&f) {
            Frame::Complete { size, body_start } => {
                assert_eq!(size, f.len());
                assert_eq!(&f[body_start..body_start + 5], b"35=D\x01");
            }
            other => panic!("{:?}", other),
        }
        for cut in 0..f.len() {
            assert_eq!(frame(&f[..cut]), Frame::Incomplete, "cut at {}", cut);
        }
        assert_eq!(frame(b"9=FIX"), Frame::Invalid(FrameError::NoBeginString));
        assert_eq!(frame(b"8=FIX.4.4\x019=1x"), Frame::Invalid(FrameError::BadBodyLength));
        assert_eq!(frame(b"8=FIX.4.4\x019=\x01"), Frame::Invalid(FrameError::BadBodyLength));
        assert_eq!(frame(b"8=FIX.4.4\x019=99999\x01"), Frame::Invalid(FrameError::TooLong));
    }

    #[test]
    fn a_wrong_body_length_is_invalid_and_a_wrong_checksum_garbled() {
        let mut f = framed(ORDER);
        let last = f.len() - 2;
        f[last] = if f[last] == b'9' { b'0' } else { f[last] + 1 };
        assert_eq!(frame(&f), Frame::Garbled { size: f.len() });
        let mut long = b"8=FIX.4.4\x019=".to_vec();
        long.extend_from_slice(format!("{}\x01", ORDER.len() - 1).as_bytes());
        long.extend_from_slice(ORDER);
        long.extend_from_slice(b"10=000\x01");
        assert_eq!(frame(&long), Frame::Invalid(FrameError::BadTrailer));
    }

    #[test]
    fn the_walk_indexes_every_field_and_the_header() {
        let f = framed(ORDER);
        let body_start = match frame(&f) {
            Frame::Complete { body_start, .. } => body_start,
            other => panic!("{:?}", other),
        };
        let mut ix = Index::default();
        walk(&f, body_start, f.len() - 7, &mut ix).unwrap();
        assert_eq!(ix.fields().len(), 15);
        let h = read_header(&f, &ix).unwrap();
        assert_eq!(h.msg_type, b"D");
        assert_eq!(h.seq, 2);
        assert_eq!(h.sender, b"BENCH0");
        assert_eq!(h.target, b"KITE");
        assert!(!h.poss_dup);
        assert_eq!(value(&f, ix.find(tag::PRICE).unwrap()), b"101.25");
        assert_eq!(ix.find(tag::TEST_REQ_ID), None);
        // A second walk forgets the first (the O(1) reset).
        let hb = framed(b"35=0\x0149=A\x0156=B\x0134=3\x0152=x\x01");
        walk(&hb, 20, hb.len() - 7, &mut ix).unwrap();
        assert_eq!(ix.find(tag::PRICE), None);
    }

    #[test]
    fn the_walk_rejects_bad_tags_and_empty_values() {
        let mut ix = Index::default();
        for (body, want) in [
            (&b"35=D\x01x4=1\x01"[..], WalkError::BadTag { at: 5 }),
            (&b"=D\x01"[..], WalkError::BadTag { at: 0 }),
            (&b"35=D\x0134\x01"[..], WalkError::BadTag { at: 5 }),
            (&b"35=\x01"[..], WalkError::EmptyValue { tag: 35 }),
            (&b"1234567890=1\x01"[..], WalkError::BadTag { at: 0 }),
        ] {
            let f = framed(body);
            let start = f.len() - 7 - body.len();
            let got = match walk(&f, start, f.len() - 7, &mut ix) {
                Err(WalkError::BadTag { at }) => Err(WalkError::BadTag { at: at - start }),
                other => other,
            };
            assert_eq!(got, Err(want), "{:?}", String::from_utf8_lossy(body));
        }
    }

    fn run_both(f: &[u8], start: usize, end: usize) {
        let mut a = Index::default();
        let mut b = Index::default();
        let ra = walk(f, start, end, &mut a);
        let rb = walk_scalar(f, start, end, &mut b);
        assert_eq!(ra, rb, "{:?}", f);
        if ra.is_ok() {
            assert_eq!(a.fields(), b.fields());
            for t in 0..200 {
                assert_eq!(a.find(t), b.find(t));
            }
        }
    }

    #[test]
    fn the_walk_agrees_with_its_scalar_twin_on_random_and_adversarial_buffers() {
        let mut r = Rand::new(42);
        let alphabet = [b'=', SOH, b'0', b'3', b'9', b'A', 0x80, 0xff, 0x3c, 0x00];
        for round in 0..20_000 {
            let len = 1 + r.below(64) as usize;
            let mut body: Vec<u8> = if round % 2 == 0 {
                // Noise from a small alphabet.
                (0..len).map(|_| alphabet[r.below(alphabet.len() as u64) as usize]).collect()
            } else {
                // Plausible fields with mutations: lengths that put '=' and SOH at every
                // word boundary, empty tags and values, a digit swapped for a delimiter.
                let mut b = Vec::new();
                while b.len() < len {
                    let tl = r.below(4) as usize;
                    for _ in 0..tl {
                        b.push(b'0' + r.below(10) as u8);
                    }
                    b.push(b'=');
                    let vl = r.below(12) as usize;
                    for _ in 0..vl {
                        b.push(b'a' + r.below(26) as u8);
                    }
                    b.push(SOH);
                }
                if r.below(3) == 0 {
                    let at = r.below(b.len() as u64) as usize;
                    b[at] = alphabet[r.below(alphabet.len() as u64) as usize];
                }
                b
            };
            if *body.last().unwrap() != SOH {
                body.push(SOH);
            }
            // The trailer follows the body, as in a real frame; the scans may see it.
            let mut f = body.clone();
            f.extend_from_slice(b"10=123\x01");
            for start in [0usize, 1, 7] {
                if start < body.len() {
                    run_both(&f, start, body.len());
                }
            }
        }
    }

    #[test]
    fn put_uint_and_put_bytes_agree_with_the_standard_library() {
        let mut r = Rand::new(3);
        let mut out = [0u8; 24];
        for i in 0..20_000u64 {
            let n = match i % 4 {
                0 => i,
                1 => r.next_u64(),
                2 => 10u64.saturating_pow((i % 21) as u32),
                _ => 10u64.saturating_pow((i % 21) as u32).wrapping_sub(1),
            };
            let len = put_uint(&mut out, n);
            assert_eq!(&out[..len], n.to_string().as_bytes());
        }
        for n in 0..40 {
            let src: Vec<u8> = (0..n as u8).map(|b| b + 1).collect();
            for room in [n, 16.max(n), 64] {
                let mut dst = vec![0u8; room];
                put_bytes(&mut dst, &src);
                assert_eq!(&dst[..n], &src[..]);
                assert!(dst[n..].iter().all(|&b| b == 0));
            }
        }
    }

    #[test]
    fn reads_uints_and_fixed_point_decimals() {
        assert_eq!(uint(b"0"), Some(0));
        assert_eq!(uint(b"123456789012345678"), Some(123456789012345678));
        assert_eq!(uint(b"1234567890123456789"), None);
        assert_eq!(uint(b""), None);
        assert_eq!(uint(b"1a"), None);
        assert_eq!(decimal(b"101.25"), Some(Decimal { mantissa: 10125, scale: 2 }));
        assert_eq!(decimal(b"100"), Some(Decimal { mantissa: 100, scale: 0 }));
        assert_eq!(decimal(b"-0.5"), Some(Decimal { mantissa: -5, scale: 1 }));
        assert_eq!(decimal(b"1.2.3"), None);
        assert_eq!(decimal(b"."), None);
        assert_eq!(decimal(b"-"), None);
        assert_eq!(decimal(b"1e5"), None);
    }

    #[test]
    fn the_writer_frames_what_frame_accepts_at_every_body_length() {
        let h = HeaderTemplate::new(b"KITE", b"BENCH0");
        let mut buf = vec![0u8; 4096];
        for pad in [0usize, 1, 40, 100, 900, 1200] {
            let text = vec![b'x'; pad.max(1)];
            let mut w = Writer::begin(&mut buf, b"0", 12, b"20261201-10:00:00.000", &h);
            w.bytes(tag::TEXT, &text).decimal(tag::PRICE, Decimal { mantissa: 5, scale: 3 });
            let (s, e) = w.finish().unwrap();
            let m = &buf[s..e];
            match frame(m) {
                Frame::Complete { size, body_start } => {
                    assert_eq!(size, m.len());
                    let mut ix = Index::default();
                    walk(m, body_start, size - 7, &mut ix).unwrap();
                    let hd = read_header(m, &ix).unwrap();
                    assert_eq!((hd.msg_type, hd.seq, hd.sender, hd.target), (&b"0"[..], 12, &b"KITE"[..], &b"BENCH0"[..]));
                    assert_eq!(value(m, ix.find(tag::PRICE).unwrap()), b"0.005");
                }
                other => panic!("pad {}: {:?}", pad, other),
            }
        }
    }

    #[test]
    fn the_writer_refuses_what_does_not_fit() {
        let h = HeaderTemplate::new(b"KITE", b"BENCH0");
        let mut buf = vec![0u8; 80];
        let mut w = Writer::begin(&mut buf, b"0", 1, b"20261201-10:00:00.000", &h);
        w.bytes(tag::TEXT, &[b'y'; 100]);
        assert_eq!(w.finish(), None);
    }
}
