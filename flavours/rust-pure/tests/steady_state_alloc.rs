//! The engine allocates nothing per order once a session runs: a counting
//! global allocator watches a session take thousands of orders.

use rust_pure::codec::{self, tag, Decimal, Frame, HeaderTemplate, Index, Writer};
use rust_pure::conn::{Acceptor, Conn, Engine};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the allocations of the calling thread (the test harness's own threads
/// allocate too, at any time).
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn allocations() -> u64 {
    ALLOCATIONS.with(|c| c.get())
}

fn count() {
    // try_with: the slot may be gone while the thread exits.
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        count();
        System.realloc(p, l, size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const TS: &[u8] = b"20261201-10:00:00.000000";

/// A client message into `buf`; returns its length.
fn client(buf: &mut [u8], h: &HeaderTemplate, msg_type: &[u8], seq: u64, body: impl FnOnce(&mut Writer)) -> usize {
    let mut w = Writer::begin(buf, msg_type, seq, TS, h);
    body(&mut w);
    let (s, e) = w.finish().unwrap();
    buf.copy_within(s..e, 0);
    e - s
}

fn order(buf: &mut [u8], h: &HeaderTemplate, seq: u64) -> usize {
    client(buf, h, b"D", seq, |w| {
        w.bytes(tag::CL_ORD_ID, b"C000000000001")
            .char(21, b'1')
            .bytes(tag::ACCOUNT, b"BENCH-ACCOUNT-001")
            .bytes(tag::SYMBOL, b"KITE.XPAR")
            .char(tag::SIDE, b'1')
            .bytes(tag::TRANSACT_TIME, TS)
            .uint(tag::ORDER_QTY, 100)
            .char(tag::ORD_TYPE, b'2')
            .decimal(tag::PRICE, Decimal { mantissa: 10125, scale: 2 })
            .char(59, b'0');
    })
}

/// Feeds `bytes` and returns the message types answered, in order.
fn feed(c: &mut Conn, e: &mut Engine, a: &Acceptor, bytes: &[u8], types: &mut Vec<u8>) {
    c.rx_space()[..bytes.len()].copy_from_slice(bytes);
    c.received(bytes.len());
    c.process(e, a, 1_796_145_616_000_000_000, 1000);
    let mut ix = Index::default();
    let out = c.pending();
    let mut at = 0;
    while at < out.len() {
        match codec::frame(&out[at..]) {
            Frame::Complete { size, body_start } => {
                let m = &out[at..at + size];
                codec::walk(m, body_start, size - 7, &mut ix).unwrap();
                let h = codec::read_header(m, &ix).unwrap();
                types.push(h.msg_type[0]);
                at += size;
            }
            other => panic!("the engine wrote a bad frame: {:?}", other),
        }
    }
    let n = out.len();
    c.sent(n);
}

#[test]
fn acknowledging_orders_allocates_nothing() {
    let a = Acceptor::new("KITE", "BENCH", 1, 1_000_000_000_000_000);
    let mut e = Engine::default();
    let mut c = Conn::default();
    let h = HeaderTemplate::new(b"BENCH0", b"KITE");
    let mut buf = vec![0u8; 4096];
    let mut batch = vec![0u8; 16 * 1024];
    let mut types = Vec::with_capacity(1 << 16);

    let n = client(&mut buf, &h, b"A", 1, |w| {
        w.uint(tag::ENCRYPT_METHOD, 0).uint(tag::HEART_BT_INT, 30).char(tag::RESET_SEQ_NUM_FLAG, b'Y');
    });
    feed(&mut c, &mut e, &a, &buf[..n], &mut types);
    assert_eq!(types, b"A");
    let mut seq = 2;
    // Warm-up: the first orders may take the first ID block.
    for _ in 0..10 {
        let n = order(&mut buf, &h, seq);
        seq += 1;
        feed(&mut c, &mut e, &a, &buf[..n], &mut types);
    }

    types.clear();
    let before = allocations();
    for round in 0..2000 {
        // One order at a time, then batches of several in one read.
        let per_read = 1 + round % 8;
        let mut len = 0;
        for _ in 0..per_read {
            len += order(&mut batch[len..], &h, seq);
            seq += 1;
        }
        feed(&mut c, &mut e, &a, &batch[..len], &mut types);
    }
    let allocated = allocations() - before;
    let orders = types.len();
    assert!(types.iter().all(|&t| t == b'8'), "every answer is an ExecutionReport");
    assert_eq!(orders as u64, (0..2000u64).map(|r| 1 + r % 8).sum::<u64>());
    assert_eq!(allocated, 0, "{} allocations for {} orders", allocated, orders);
}

#[test]
fn the_counter_sees_an_allocation() {
    let before = allocations();
    let v: Vec<u8> = Vec::with_capacity(64);
    assert_eq!(allocations() - before, 1);
    drop(v);
}
