//! One connection's engine work, without I/O: frames in the receive buffer go
//! through the codec, the session and the ack application; replies are encoded
//! into the send buffer. The transport moves the bytes (src/server.rs).

use crate::clock::{Clock, TIMESTAMP_LEN};
use crate::codec::{self, tag, Frame, HeaderTemplate, Index, Writer};
use crate::session::{AdminFields, Directory, Proxy, Session, Verdict};
use std::sync::atomic::{AtomicU64, Ordering};

pub const RX_CAPACITY: usize = 64 * 1024;
pub const TX_CAPACITY: usize = 256 * 1024;
/// Room kept free in the send buffer before a frame is handled: the longest
/// reply (a Heartbeat echoing the longest TestReqID a frame can carry fits).
const REPLY_ROOM: usize = codec::MAX_FRAME + 512;

/// What an acceptor shares between its threads: who may log on and the ID source.
pub struct Acceptor {
    pub directory: Directory,
    templates: Vec<HeaderTemplate>,
    ids: AtomicU64,
}

impl Acceptor {
    /// Counterparties `BENCH0`..`BENCH<sessions-1>` of `our_comp_id`; IDs
    /// count from `first_id` (the start time in microseconds: 16 digits).
    pub fn new(our_comp_id: &str, prefix: &str, sessions: usize, first_id: u64) -> Acceptor {
        let directory = Directory::new(our_comp_id, prefix, sessions);
        let templates = (0..sessions).map(|k| HeaderTemplate::new(directory.our_comp_id(), &directory.comp_id(k))).collect();
        Acceptor { directory, templates, ids: AtomicU64::new(first_id) }
    }
}

/// Order and execution IDs, unique across threads: each thread takes blocks.
#[derive(Default)]
pub struct Ids {
    next: u64,
    end: u64,
}

const ID_BLOCK: u64 = 1 << 20;

impl Ids {
    #[inline]
    fn take(&mut self, a: &Acceptor) -> u64 {
        if self.next == self.end {
            self.next = a.ids.fetch_add(ID_BLOCK, Ordering::Relaxed);
            self.end = self.next + ID_BLOCK;
        }
        let id = self.next;
        self.next += 1;
        id
    }
}

/// Per-thread state of the engine: clock, index and IDs.
#[derive(Default)]
pub struct Engine {
    clock: Clock,
    index: Index,
    ids: Ids,
    pub orders: u64,
}

/// The send buffer seen as the session's Proxy.
struct Outbox<'a> {
    tx: &'a mut [u8],
    tail: &'a mut usize,
    template: &'a HeaderTemplate,
    now: &'a [u8; TIMESTAMP_LEN],
    overflow: bool,
}

impl<'a> Outbox<'a> {
    #[inline]
    fn write(&mut self, msg_type: &[u8], seq: u64, body: impl FnOnce(&mut Writer)) {
        let at = *self.tail;
        let mut w = Writer::begin(&mut self.tx[at..], msg_type, seq, self.now, self.template);
        body(&mut w);
        match w.finish() {
            Some((s, e)) => {
                if s > 0 {
                    // A short body left a gap before the message: close it.
                    self.tx.copy_within(at + s..at + e, at);
                }
                *self.tail = at + e - s;
            }
            None => self.overflow = true,
        }
    }
}

impl<'a> Proxy for Outbox<'a> {
    fn logon(&mut self, seq: u64, heart_bt_int: u64, reset: bool) {
        self.write(b"A", seq, |w| {
            w.uint(tag::ENCRYPT_METHOD, 0).uint(tag::HEART_BT_INT, heart_bt_int);
            if reset {
                w.char(tag::RESET_SEQ_NUM_FLAG, b'Y');
            }
        });
    }
    fn heartbeat(&mut self, seq: u64, test_req_id: &[u8]) {
        self.write(b"0", seq, |w| {
            if !test_req_id.is_empty() {
                w.bytes(tag::TEST_REQ_ID, test_req_id);
            }
        });
    }
    fn test_request(&mut self, seq: u64, test_req_id: &[u8]) {
        self.write(b"1", seq, |w| {
            w.bytes(tag::TEST_REQ_ID, test_req_id);
        });
    }
    fn resend_request(&mut self, seq: u64, begin: u64) {
        self.write(b"2", seq, |w| {
            w.uint(tag::BEGIN_SEQ_NO, begin).uint(tag::END_SEQ_NO, 0);
        });
    }
    fn gap_fill(&mut self, seq: u64, new_seq: u64) {
        let now = self.now;
        self.write(b"4", seq, |w| {
            w.char(tag::POSS_DUP_FLAG, b'Y').bytes(122, now).char(tag::GAP_FILL_FLAG, b'Y').uint(tag::NEW_SEQ_NO, new_seq);
        });
    }
    fn logout(&mut self, seq: u64, text: &[u8]) {
        self.write(b"5", seq, |w| {
            if !text.is_empty() {
                w.bytes(tag::TEXT, text);
            }
        });
    }
    fn reject(&mut self, seq: u64, ref_seq: u64, ref_tag: u32, reason: u32, text: &[u8]) {
        self.write(b"3", seq, |w| {
            w.uint(tag::REF_SEQ_NUM, ref_seq);
            if ref_tag != 0 {
                w.uint(tag::REF_TAG_ID, ref_tag as u64);
            }
            w.uint(tag::SESSION_REJECT_REASON, reason as u64).bytes(tag::TEXT, text);
        });
    }
    fn business_reject(&mut self, seq: u64, ref_seq: u64, ref_msg_type: &[u8], reason: u32, text: &[u8]) {
        self.write(b"j", seq, |w| {
            w.uint(tag::REF_SEQ_NUM, ref_seq)
                .bytes(tag::REF_MSG_TYPE, ref_msg_type)
                .uint(tag::BUSINESS_REJECT_REASON, reason as u64)
                .bytes(tag::TEXT, text);
        });
    }
}

/// Why a connection ends, for the server's log.
pub type CloseReason = &'static str;

pub struct Conn {
    rx: Box<[u8]>,
    rx_len: usize,
    tx: Box<[u8]>,
    tx_head: usize,
    tx_tail: usize,
    pub session: Session,
    /// Set once the session or the codec decided to close: flush, then close.
    pub closing: Option<CloseReason>,
}

impl Default for Conn {
    fn default() -> Self {
        Conn {
            rx: vec![0u8; RX_CAPACITY].into_boxed_slice(),
            rx_len: 0,
            tx: vec![0u8; TX_CAPACITY].into_boxed_slice(),
            tx_head: 0,
            tx_tail: 0,
            session: Session::default(),
            closing: None,
        }
    }
}

/// The order's fields a NewOrderSingle must carry, in the order they are checked.
const ORDER_REQUIRED: [u32; 5] = [tag::CL_ORD_ID, tag::SYMBOL, tag::SIDE, tag::ORDER_QTY, tag::ORD_TYPE];

impl Conn {
    /// Ready for a new connection, keeping the buffers.
    pub fn reset(&mut self) {
        self.rx_len = 0;
        self.tx_head = 0;
        self.tx_tail = 0;
        self.session = Session::default();
        self.closing = None;
    }

    /// Where received bytes go; `received(n)` after writing n of them.
    pub fn rx_space(&mut self) -> &mut [u8] {
        &mut self.rx[self.rx_len..]
    }
    pub fn received(&mut self, n: usize) {
        self.rx_len += n;
    }
    /// The bytes waiting to be sent; `sent(n)` once n of them went out.
    pub fn pending(&self) -> &[u8] {
        &self.tx[self.tx_head..self.tx_tail]
    }
    pub fn sent(&mut self, n: usize) {
        self.tx_head += n;
        if self.tx_head == self.tx_tail {
            self.tx_head = 0;
            self.tx_tail = 0;
        }
    }
    /// Whether the peer reads too slowly for more input to be taken.
    pub fn backed_up(&self) -> bool {
        self.tx_tail - self.tx_head > TX_CAPACITY / 2
    }

    fn make_room(&mut self) -> bool {
        if self.tx.len() - self.tx_tail >= REPLY_ROOM {
            return true;
        }
        if self.tx_head > 0 {
            self.tx.copy_within(self.tx_head..self.tx_tail, 0);
            self.tx_tail -= self.tx_head;
            self.tx_head = 0;
        }
        self.tx.len() - self.tx_tail >= REPLY_ROOM
    }

    /// Handles every whole frame received; returns the orders acknowledged.
    /// Frames stay in the buffer while the send buffer has no room for replies.
    pub fn process(&mut self, e: &mut Engine, a: &Acceptor, now_ns: i64, now_ms: i64) -> u64 {
        let mut at = 0;
        let orders_before = e.orders;
        while self.closing.is_none() && at < self.rx_len {
            if !self.make_room() {
                break;
            }
            let size = match codec::frame(&self.rx[at..self.rx_len]) {
                Frame::Incomplete => break,
                Frame::Invalid(err) => {
                    // Nothing after this can be framed: say why and close.
                    self.closing = Some(err.text());
                    if self.session.is_logged_on() {
                        let k = self.session.counterparty().unwrap_or(0);
                        let mut out = Outbox {
                            tx: &mut self.tx,
                            tail: &mut self.tx_tail,
                            template: &a.templates[k],
                            now: e.clock.render(now_ns),
                            overflow: false,
                        };
                        let seq = self.session.take_out_seq(now_ms);
                        out.logout(seq, err.text().as_bytes());
                    }
                    break;
                }
                Frame::Garbled { size } => size,
                Frame::Complete { size, body_start } => {
                    self.handle(e, a, at, size, body_start, now_ns, now_ms);
                    size
                }
            };
            at += size;
        }
        if at > 0 {
            self.rx.copy_within(at..self.rx_len, 0);
            self.rx_len -= at;
        }
        if self.closing.is_none() && self.rx_len == self.rx.len() {
            self.closing = Some("receive buffer full");
        }
        e.orders - orders_before
    }

    /// Session timers; call now and then.
    pub fn on_timer(&mut self, e: &mut Engine, a: &Acceptor, now_ns: i64, now_ms: i64) {
        if let (Some(k), None) = (self.session.counterparty(), self.closing) {
            if !self.make_room() {
                return;
            }
            let mut out =
                Outbox { tx: &mut self.tx, tail: &mut self.tx_tail, template: &a.templates[k], now: e.clock.render(now_ns), overflow: false };
            if let Verdict::Close(why) = self.session.on_timer(now_ms, &mut out) {
                self.closing = Some(why);
            }
        }
    }

    /// The server stops: Logout to a logged-on counterparty. True when its answer is awaited.
    pub fn shut_down(&mut self, e: &mut Engine, a: &Acceptor, now_ns: i64, now_ms: i64) -> bool {
        match self.session.counterparty() {
            Some(k) if self.closing.is_none() && self.make_room() => {
                let mut out =
                    Outbox { tx: &mut self.tx, tail: &mut self.tx_tail, template: &a.templates[k], now: e.clock.render(now_ns), overflow: false };
                self.session.shut_down(now_ms, &mut out)
            }
            _ => false,
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn handle(&mut self, e: &mut Engine, a: &Acceptor, at: usize, size: usize, body_start: usize, now_ns: i64, now_ms: i64) {
        let f = &self.rx[at..at + size];
        // A frame whose fields or header cannot be read is garbled: ignored.
        if codec::walk(f, body_start, size - 7, &mut e.index).is_err() {
            return;
        }
        let ix = &e.index;
        let h = match codec::read_header(f, ix) {
            Ok(h) => h,
            Err(_) => return,
        };
        let mut admin = AdminFields::default();
        if h.msg_type.len() == 1 && b"012345A".contains(&h.msg_type[0]) {
            let get = |t: u32| ix.find(t).map(|x| codec::value(f, x));
            admin.test_req_id = get(tag::TEST_REQ_ID).unwrap_or(b"");
            admin.heart_bt_int = get(tag::HEART_BT_INT).and_then(codec::uint);
            admin.reset_seq_num = get(tag::RESET_SEQ_NUM_FLAG) == Some(b"Y");
            admin.begin_seq_no = get(tag::BEGIN_SEQ_NO).and_then(codec::uint);
            admin.new_seq_no = get(tag::NEW_SEQ_NO).and_then(codec::uint);
            admin.gap_fill = get(tag::GAP_FILL_FLAG) == Some(b"Y");
        }
        // Before a Logon is accepted there is no counterparty to write to: the
        // session then only closes, and this template is not used.
        let k = self.session.counterparty().or_else(|| a.directory.lookup(h.sender)).unwrap_or(0);
        let template = match a.templates.get(k) {
            Some(t) => t,
            None => {
                self.closing = Some("no counterparties configured");
                return;
            }
        };
        let now = e.clock.render(now_ns);
        let mut out = Outbox { tx: &mut self.tx, tail: &mut self.tx_tail, template, now, overflow: false };
        match self.session.on_message(now_ms, &h, &admin, &a.directory, &mut out) {
            Verdict::Done => {}
            Verdict::Close(why) => self.closing = Some(why),
            Verdict::Deliver => {
                if h.msg_type == b"D" {
                    let seq = self.session.take_out_seq(now_ms);
                    if ack_order(&mut out, seq, f, ix, &mut e.ids, a, h.seq) {
                        e.orders += 1;
                    }
                } else {
                    let seq = self.session.take_out_seq(now_ms);
                    out.business_reject(seq, h.seq, h.msg_type, 3, b"unsupported message type");
                }
            }
        }
        if out.overflow && self.closing.is_none() {
            self.closing = Some("a reply did not fit the send buffer");
        }
    }
}

/// The ack application: a NewOrderSingle is answered with an ExecutionReport
/// (New), or a session Reject naming the field it lacks. True when acknowledged.
#[inline]
fn ack_order(out: &mut Outbox, seq: u64, f: &[u8], ix: &Index, ids: &mut Ids, a: &Acceptor, ref_seq: u64) -> bool {
    for &t in ORDER_REQUIRED.iter() {
        if ix.find(t).is_none() {
            out.reject(seq, ref_seq, t, 1, b"required tag missing");
            return false;
        }
    }
    let get = |t: u32| ix.find(t).map(|x| codec::value(f, x)).unwrap_or(b"");
    let qty = match codec::decimal(get(tag::ORDER_QTY)) {
        Some(q) if q.mantissa > 0 => q,
        _ => {
            out.reject(seq, ref_seq, tag::ORDER_QTY, 6, b"OrderQty(38) is not a positive decimal");
            return false;
        }
    };
    let limit = get(tag::ORD_TYPE) == b"2";
    let price = match (ix.find(tag::PRICE), limit) {
        (Some(p), _) => match codec::decimal(codec::value(f, p)) {
            Some(d) => Some(d),
            None => {
                out.reject(seq, ref_seq, tag::PRICE, 6, b"Price(44) is not a decimal");
                return false;
            }
        },
        (None, true) => {
            out.reject(seq, ref_seq, tag::PRICE, 1, b"a limit order needs Price(44)");
            return false;
        }
        (None, false) => None,
    };
    let order_id = ids.take(a);
    let exec_id = ids.take(a);
    let now = out.now;
    out.write(b"8", seq, |w| {
        w.uint(tag::ORDER_ID, order_id)
            .bytes(tag::CL_ORD_ID, get(tag::CL_ORD_ID))
            .uint(tag::EXEC_ID, exec_id)
            .char(tag::EXEC_TYPE, b'0')
            .char(tag::ORD_STATUS, b'0')
            .bytes(tag::SYMBOL, get(tag::SYMBOL))
            .bytes(tag::SIDE, get(tag::SIDE))
            .decimal(tag::ORDER_QTY, qty);
        if let Some(p) = price {
            w.decimal(tag::PRICE, p);
        }
        w.decimal(tag::LEAVES_QTY, qty).uint(tag::CUM_QTY, 0).uint(tag::AVG_PX, 0).bytes(tag::TRANSACT_TIME, now);
    });
    true
}
