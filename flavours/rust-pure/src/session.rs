//! The FIX.4.4 session layer: logon, sequence numbers, heartbeats, resend and
//! logout. It takes decoded values and answers through a `Proxy`; it never sees
//! bytes, sockets or threads.

use crate::codec::Header;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the session's answers go. Each call writes one message numbered `seq`.
pub trait Proxy {
    fn logon(&mut self, seq: u64, heart_bt_int: u64, reset: bool);
    fn heartbeat(&mut self, seq: u64, test_req_id: &[u8]);
    fn test_request(&mut self, seq: u64, test_req_id: &[u8]);
    fn resend_request(&mut self, seq: u64, begin: u64);
    /// A SequenceReset-GapFill numbered `seq` (PossDupFlag=Y) up to `new_seq`.
    fn gap_fill(&mut self, seq: u64, new_seq: u64);
    fn logout(&mut self, seq: u64, text: &[u8]);
    fn reject(&mut self, seq: u64, ref_seq: u64, ref_tag: u32, reason: u32, text: &[u8]);
    fn business_reject(&mut self, seq: u64, ref_seq: u64, ref_msg_type: &[u8], reason: u32, text: &[u8]);
}

/// The session fields of admin messages, read by the engine from the index.
#[derive(Debug, Clone, Copy, Default)]
pub struct AdminFields<'a> {
    pub test_req_id: &'a [u8],
    pub heart_bt_int: Option<u64>,
    pub reset_seq_num: bool,
    pub begin_seq_no: Option<u64>,
    pub new_seq_no: Option<u64>,
    pub gap_fill: bool,
}

/// What the engine does with a message after the session saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// An application message in sequence: hand it to the application.
    Deliver,
    /// The session dealt with it.
    Done,
    /// Flush what was written, then close the connection; the text says why.
    Close(&'static str),
}

/// The counterparties this acceptor knows, `<prefix>0`..`<prefix><n-1>`, and
/// which of them are logged on (across all threads: a second Logon is refused).
pub struct Directory {
    our_comp_id: Vec<u8>,
    prefix: Vec<u8>,
    logged_on: Vec<AtomicBool>,
}

impl Directory {
    pub fn new(our_comp_id: &str, prefix: &str, sessions: usize) -> Directory {
        Directory {
            our_comp_id: our_comp_id.as_bytes().to_vec(),
            prefix: prefix.as_bytes().to_vec(),
            logged_on: (0..sessions).map(|_| AtomicBool::new(false)).collect(),
        }
    }
    pub fn our_comp_id(&self) -> &[u8] {
        &self.our_comp_id
    }
    pub fn len(&self) -> usize {
        self.logged_on.len()
    }
    pub fn is_empty(&self) -> bool {
        self.logged_on.is_empty()
    }
    /// The counterparty's CompID: prefix and number.
    pub fn comp_id(&self, k: usize) -> Vec<u8> {
        let mut v = self.prefix.clone();
        v.extend_from_slice(k.to_string().as_bytes());
        v
    }
    /// The number of a known counterparty CompID.
    pub fn lookup(&self, comp_id: &[u8]) -> Option<usize> {
        if !comp_id.starts_with(&self.prefix) {
            return None;
        }
        let digits = &comp_id[self.prefix.len()..];
        if digits.is_empty() || digits.len() > 9 || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        let k = crate::codec::uint(digits)? as usize;
        if k < self.logged_on.len() {
            Some(k)
        } else {
            None
        }
    }
    fn claim(&self, k: usize) -> bool {
        self.logged_on[k].compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }
    fn release(&self, k: usize) {
        self.logged_on[k].store(false, Ordering::Release);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    AwaitingLogon,
    Active,
    /// We sent a Logout and wait for the answer.
    LoggingOut,
    Ended,
}

pub struct Session {
    state: State,
    counterparty: Option<usize>,
    next_in: u64,
    next_out: u64,
    /// Messages up to this number are awaited after a ResendRequest.
    resend_until: u64,
    heart_bt_ms: i64,
    last_in_ms: i64,
    last_out_ms: i64,
    test_request_out: bool,
}

impl Default for Session {
    fn default() -> Self {
        Session {
            state: State::AwaitingLogon,
            counterparty: None,
            next_in: 1,
            next_out: 1,
            resend_until: 0,
            heart_bt_ms: 30_000,
            last_in_ms: 0,
            last_out_ms: 0,
            test_request_out: false,
        }
    }
}

const ADMIN: &[u8] = b"012345A";

impl Session {
    pub fn is_logged_on(&self) -> bool {
        matches!(self.state, State::Active | State::LoggingOut)
    }
    pub fn counterparty(&self) -> Option<usize> {
        self.counterparty
    }
    pub fn next_in(&self) -> u64 {
        self.next_in
    }
    pub fn next_out(&self) -> u64 {
        self.next_out
    }

    /// The number of the next outbound message, taken (the application's sends).
    #[inline]
    pub fn take_out_seq(&mut self, now_ms: i64) -> u64 {
        self.last_out_ms = now_ms;
        let s = self.next_out;
        self.next_out += 1;
        s
    }

    /// Frees the counterparty's slot; the connection is gone.
    pub fn end(&mut self, dir: &Directory) {
        if let Some(k) = self.counterparty.take() {
            dir.release(k);
        }
        self.state = State::Ended;
    }

    /// One inbound message, framed and with a readable header.
    pub fn on_message<P: Proxy>(
        &mut self,
        now_ms: i64,
        h: &Header,
        f: &AdminFields,
        dir: &Directory,
        p: &mut P,
    ) -> Verdict {
        self.last_in_ms = now_ms;
        self.test_request_out = false;
        match self.state {
            State::AwaitingLogon => self.on_logon(now_ms, h, f, dir, p),
            State::Ended => Verdict::Close("session ended"),
            State::Active | State::LoggingOut => self.on_session_message(now_ms, h, f, dir, p),
        }
    }

    fn on_logon<P: Proxy>(&mut self, now_ms: i64, h: &Header, f: &AdminFields, dir: &Directory, p: &mut P) -> Verdict {
        // Until a Logon is accepted nobody is known to answer: refusals close.
        if h.msg_type != b"A" {
            return Verdict::Close("the first message is not a Logon");
        }
        if h.target != dir.our_comp_id() {
            return Verdict::Close("Logon for another TargetCompID");
        }
        let k = match dir.lookup(h.sender) {
            Some(k) => k,
            None => return Verdict::Close("Logon from an unknown SenderCompID"),
        };
        let hb = match f.heart_bt_int {
            Some(s) if s <= 3600 => s,
            _ => return Verdict::Close("Logon without a usable HeartBtInt(108)"),
        };
        if !dir.claim(k) {
            return Verdict::Close("Logon for a session that is already logged on");
        }
        self.counterparty = Some(k);
        self.heart_bt_ms = if hb == 0 { i64::MAX / 4 } else { hb as i64 * 1000 };
        // No store to resume from: both sides start again at every Logon.
        self.next_out = 1;
        self.next_in = 1;
        self.state = State::Active;
        let seq = self.take_out_seq(now_ms);
        p.logon(seq, hb, f.reset_seq_num);
        if h.seq == 1 || f.reset_seq_num {
            self.next_in = h.seq + 1;
        } else {
            self.request_resend(now_ms, h.seq, p);
        }
        Verdict::Done
    }

    fn request_resend<P: Proxy>(&mut self, now_ms: i64, got: u64, p: &mut P) {
        if self.resend_until < self.next_in {
            self.resend_until = got;
            let seq = self.take_out_seq(now_ms);
            p.resend_request(seq, self.next_in);
        }
    }

    fn logout<P: Proxy>(&mut self, now_ms: i64, text: &[u8], p: &mut P) {
        let seq = self.take_out_seq(now_ms);
        p.logout(seq, text);
    }

    fn on_session_message<P: Proxy>(
        &mut self,
        now_ms: i64,
        h: &Header,
        f: &AdminFields,
        dir: &Directory,
        p: &mut P,
    ) -> Verdict {
        let counterparty_ok = self.counterparty.map_or(false, |k| dir.lookup(h.sender) == Some(k));
        if !counterparty_ok || h.target != dir.our_comp_id() {
            let seq = self.take_out_seq(now_ms);
            p.reject(seq, h.seq, 0, 9, b"CompID problem");
            self.logout(now_ms, b"CompID problem", p);
            return Verdict::Close("a message with the wrong CompIDs");
        }
        let admin = h.msg_type.len() == 1 && ADMIN.contains(&h.msg_type[0]);
        let kind = if admin { h.msg_type[0] } else { 0 };
        // SequenceReset-Reset sets the number whatever the message's own number.
        if kind == b'4' && !f.gap_fill {
            return self.sequence_reset(now_ms, h, f, p);
        }
        if h.seq < self.next_in {
            if h.poss_dup {
                return Verdict::Done;
            }
            let mut text = [0u8; 96];
            let n = too_low_text(&mut text, self.next_in, h.seq);
            self.logout(now_ms, &text[..n], p);
            return Verdict::Close("MsgSeqNum too low");
        }
        if h.seq > self.next_in {
            if kind == b'5' {
                self.logout(now_ms, b"", p);
                return Verdict::Close("");
            }
            self.request_resend(now_ms, h.seq, p);
            // FIX: a SequenceReset-GapFill past the gap fills it too.
            if kind == b'4' {
                return self.sequence_reset(now_ms, h, f, p);
            }
            return Verdict::Done;
        }
        self.next_in += 1;
        match kind {
            0 => Verdict::Deliver,
            b'0' | b'3' => Verdict::Done,
            b'1' => {
                let seq = self.take_out_seq(now_ms);
                p.heartbeat(seq, f.test_req_id);
                Verdict::Done
            }
            b'2' => {
                // No store: every message asked for is replaced by one gap fill.
                if let Some(begin) = f.begin_seq_no {
                    if begin >= 1 && begin < self.next_out {
                        self.last_out_ms = now_ms;
                        p.gap_fill(begin, self.next_out);
                    }
                }
                Verdict::Done
            }
            b'4' => self.sequence_reset(now_ms, h, f, p),
            b'5' => {
                if self.state == State::Active {
                    self.logout(now_ms, b"", p);
                }
                Verdict::Close("")
            }
            _ => {
                // 'A': a second Logon on a logged-on session.
                self.logout(now_ms, b"Logon on a session already logged on", p);
                Verdict::Close("a second Logon on a logged-on session")
            }
        }
    }

    fn sequence_reset<P: Proxy>(&mut self, now_ms: i64, h: &Header, f: &AdminFields, p: &mut P) -> Verdict {
        match f.new_seq_no {
            Some(n) if n >= self.next_in => {
                self.next_in = n;
                Verdict::Done
            }
            _ => {
                let seq = self.take_out_seq(now_ms);
                p.reject(seq, h.seq, 36, 5, b"NewSeqNo(36) missing or below the expected MsgSeqNum");
                Verdict::Done
            }
        }
    }

    /// Timers, called now and then: a Heartbeat after HeartBtInt of silence, a
    /// TestRequest when the counterparty is silent for HeartBtInt and a fifth,
    /// a Logout when it stays silent another HeartBtInt.
    pub fn on_timer<P: Proxy>(&mut self, now_ms: i64, p: &mut P) -> Verdict {
        if self.state != State::Active {
            return Verdict::Done;
        }
        let hb = self.heart_bt_ms;
        let silent = now_ms - self.last_in_ms;
        if silent >= hb * 2 + hb / 5 {
            self.logout(now_ms, b"heartbeat timeout", p);
            return Verdict::Close("heartbeat timeout");
        }
        if silent >= hb + hb / 5 && !self.test_request_out {
            self.test_request_out = true;
            let seq = self.take_out_seq(now_ms);
            p.test_request(seq, b"KITE-TIMER");
        } else if now_ms - self.last_out_ms >= hb {
            let seq = self.take_out_seq(now_ms);
            p.heartbeat(seq, b"");
        }
        Verdict::Done
    }

    /// The server stops: a Logout to a logged-on counterparty. True when an
    /// answer is awaited.
    pub fn shut_down<P: Proxy>(&mut self, now_ms: i64, p: &mut P) -> bool {
        if self.state != State::Active {
            return false;
        }
        self.logout(now_ms, b"server shutting down", p);
        self.state = State::LoggingOut;
        true
    }
}

fn too_low_text(out: &mut [u8], expected: u64, got: u64) -> usize {
    use crate::codec::put_uint;
    let a = b"MsgSeqNum too low, expecting ";
    let b = b" but received ";
    let mut n = 0;
    out[..a.len()].copy_from_slice(a);
    n += a.len();
    n += put_uint(&mut out[n..], expected);
    out[n..n + b.len()].copy_from_slice(b);
    n += b.len();
    n += put_uint(&mut out[n..], got);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Fake {
        sent: Vec<String>,
    }

    impl Proxy for Fake {
        fn logon(&mut self, seq: u64, hb: u64, reset: bool) {
            self.sent.push(format!("{} A hb={} reset={}", seq, hb, reset));
        }
        fn heartbeat(&mut self, seq: u64, id: &[u8]) {
            self.sent.push(format!("{} 0 {}", seq, String::from_utf8_lossy(id)));
        }
        fn test_request(&mut self, seq: u64, id: &[u8]) {
            self.sent.push(format!("{} 1 {}", seq, String::from_utf8_lossy(id)));
        }
        fn resend_request(&mut self, seq: u64, begin: u64) {
            self.sent.push(format!("{} 2 begin={}", seq, begin));
        }
        fn gap_fill(&mut self, seq: u64, new_seq: u64) {
            self.sent.push(format!("{} 4 new={}", seq, new_seq));
        }
        fn logout(&mut self, seq: u64, text: &[u8]) {
            self.sent.push(format!("{} 5 {}", seq, String::from_utf8_lossy(text)));
        }
        fn reject(&mut self, seq: u64, ref_seq: u64, ref_tag: u32, reason: u32, _: &[u8]) {
            self.sent.push(format!("{} 3 ref={} tag={} reason={}", seq, ref_seq, ref_tag, reason));
        }
        fn business_reject(&mut self, seq: u64, ref_seq: u64, t: &[u8], reason: u32, _: &[u8]) {
            self.sent.push(format!("{} j ref={} type={} reason={}", seq, ref_seq, String::from_utf8_lossy(t), reason));
        }
    }

    fn hdr<'a>(t: &'a [u8], seq: u64, sender: &'a [u8]) -> Header<'a> {
        Header { msg_type: t, seq, sender, target: b"KITE", poss_dup: false }
    }

    fn logged_on(dir: &Directory) -> (Session, Fake) {
        let mut s = Session::default();
        let mut p = Fake::default();
        let f = AdminFields { heart_bt_int: Some(30), reset_seq_num: true, ..Default::default() };
        assert_eq!(s.on_message(0, &hdr(b"A", 1, b"BENCH0"), &f, dir, &mut p), Verdict::Done);
        assert_eq!(p.sent, vec!["1 A hb=30 reset=true"]);
        p.sent.clear();
        (s, p)
    }

    fn none() -> AdminFields<'static> {
        AdminFields::default()
    }

    #[test]
    fn logs_on_and_delivers_application_messages_in_sequence() {
        let dir = Directory::new("KITE", "BENCH", 2);
        let (mut s, mut p) = logged_on(&dir);
        assert_eq!(s.on_message(1, &hdr(b"D", 2, b"BENCH0"), &none(), &dir, &mut p), Verdict::Deliver);
        assert_eq!(s.take_out_seq(1), 2);
        assert_eq!(s.next_in(), 3);
        assert!(p.sent.is_empty());
    }

    #[test]
    fn refuses_a_second_logon_for_the_same_counterparty_until_the_first_ends() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut first, _) = logged_on(&dir);
        let mut s = Session::default();
        let mut p = Fake::default();
        let f = AdminFields { heart_bt_int: Some(30), reset_seq_num: true, ..Default::default() };
        assert!(matches!(s.on_message(0, &hdr(b"A", 1, b"BENCH0"), &f, &dir, &mut p), Verdict::Close(_)));
        first.end(&dir);
        let mut s = Session::default();
        assert_eq!(s.on_message(0, &hdr(b"A", 1, b"BENCH0"), &f, &dir, &mut p), Verdict::Done);
    }

    #[test]
    fn refuses_unknown_counterparties_and_a_first_message_other_than_logon() {
        let dir = Directory::new("KITE", "BENCH", 2);
        let f = AdminFields { heart_bt_int: Some(30), ..Default::default() };
        let mut p = Fake::default();
        for h in [hdr(b"A", 1, b"BENCH2"), hdr(b"A", 1, b"BENCH01"), hdr(b"A", 1, b"OTHER"), hdr(b"D", 1, b"BENCH0")] {
            let mut s = Session::default();
            assert!(matches!(s.on_message(0, &h, &f, &dir, &mut p), Verdict::Close(_)));
        }
        assert!(p.sent.is_empty());
    }

    #[test]
    fn answers_a_test_request_with_its_id() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        let f = AdminFields { test_req_id: b"T1", ..Default::default() };
        assert_eq!(s.on_message(1, &hdr(b"1", 2, b"BENCH0"), &f, &dir, &mut p), Verdict::Done);
        assert_eq!(s.on_message(1, &hdr(b"0", 3, b"BENCH0"), &none(), &dir, &mut p), Verdict::Done);
        assert_eq!(p.sent, vec!["2 0 T1"]);
    }

    #[test]
    fn asks_once_for_a_gap_and_accepts_the_resent_messages() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        assert_eq!(s.on_message(1, &hdr(b"D", 4, b"BENCH0"), &none(), &dir, &mut p), Verdict::Done);
        assert_eq!(s.on_message(1, &hdr(b"D", 5, b"BENCH0"), &none(), &dir, &mut p), Verdict::Done);
        assert_eq!(p.sent, vec!["2 2 begin=2"]);
        assert_eq!(s.on_message(1, &hdr(b"D", 2, b"BENCH0"), &none(), &dir, &mut p), Verdict::Deliver);
        let gap = AdminFields { gap_fill: true, new_seq_no: Some(6), ..Default::default() };
        let mut h = hdr(b"4", 3, b"BENCH0");
        h.poss_dup = true;
        assert_eq!(s.on_message(1, &h, &gap, &dir, &mut p), Verdict::Done);
        assert_eq!(s.next_in(), 6);
        assert_eq!(s.on_message(1, &hdr(b"D", 6, b"BENCH0"), &none(), &dir, &mut p), Verdict::Deliver);
    }

    #[test]
    fn logs_out_when_sequence_number_too_low() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        assert_eq!(s.on_message(1, &hdr(b"D", 2, b"BENCH0"), &none(), &dir, &mut p), Verdict::Deliver);
        let mut dup = hdr(b"D", 2, b"BENCH0");
        dup.poss_dup = true;
        assert_eq!(s.on_message(1, &dup, &none(), &dir, &mut p), Verdict::Done);
        assert!(p.sent.is_empty());
        assert!(matches!(s.on_message(1, &hdr(b"D", 1, b"BENCH0"), &none(), &dir, &mut p), Verdict::Close(_)));
        assert_eq!(p.sent, vec!["2 5 MsgSeqNum too low, expecting 3 but received 1"]);
    }

    #[test]
    fn answers_a_resend_request_with_one_gap_fill() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        s.take_out_seq(0);
        s.take_out_seq(0); // 2 and 3 went out
        let f = AdminFields { begin_seq_no: Some(2), ..Default::default() };
        assert_eq!(s.on_message(1, &hdr(b"2", 2, b"BENCH0"), &f, &dir, &mut p), Verdict::Done);
        assert_eq!(p.sent, vec!["2 4 new=4"]);
        assert_eq!(s.next_out(), 4);
    }

    #[test]
    fn answers_a_logout_with_a_logout_and_closes() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        assert_eq!(s.on_message(1, &hdr(b"5", 2, b"BENCH0"), &none(), &dir, &mut p), Verdict::Close(""));
        assert_eq!(p.sent, vec!["2 5 "]);
        // A Logout past a gap is answered too.
        let (mut s, mut p) = {
            s.end(&dir);
            logged_on(&dir)
        };
        assert_eq!(s.on_message(1, &hdr(b"5", 9, b"BENCH0"), &none(), &dir, &mut p), Verdict::Close(""));
        assert_eq!(p.sent, vec!["2 5 "]);
    }

    #[test]
    fn rejects_wrong_comp_ids_and_logs_out() {
        let dir = Directory::new("KITE", "BENCH", 2);
        let (mut s, mut p) = logged_on(&dir);
        assert!(matches!(s.on_message(1, &hdr(b"D", 2, b"BENCH1"), &none(), &dir, &mut p), Verdict::Close(_)));
        assert_eq!(p.sent, vec!["2 3 ref=2 tag=0 reason=9", "3 5 CompID problem"]);
    }

    #[test]
    fn heartbeats_on_silence_then_tests_then_logs_out() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        assert_eq!(s.on_timer(29_999, &mut p), Verdict::Done);
        assert!(p.sent.is_empty());
        assert_eq!(s.on_timer(30_000, &mut p), Verdict::Done);
        assert_eq!(s.on_timer(36_000, &mut p), Verdict::Done);
        assert_eq!(s.on_timer(37_000, &mut p), Verdict::Done);
        assert!(matches!(s.on_timer(66_000, &mut p), Verdict::Close(_)));
        assert_eq!(p.sent, vec!["2 0 ", "3 1 KITE-TIMER", "4 5 heartbeat timeout"]);
    }

    #[test]
    fn shutting_down_logs_out_and_waits_for_the_answer() {
        let dir = Directory::new("KITE", "BENCH", 1);
        let (mut s, mut p) = logged_on(&dir);
        assert!(s.shut_down(5, &mut p));
        assert_eq!(s.on_message(6, &hdr(b"5", 2, b"BENCH0"), &none(), &dir, &mut p), Verdict::Close(""));
        assert_eq!(p.sent, vec!["2 5 server shutting down"]);
    }
}
