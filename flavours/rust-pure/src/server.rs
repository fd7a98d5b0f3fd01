//! Kernel TCP acceptor models: single (one session read directly), mono (one
//! epoll thread), pool (a front door handing sessions to epoll workers through
//! bounded lock-free queues) and shard (SO_REUSEPORT listeners, one per thread).
//! Every thread is an agent: one pass of its loop is a duty cycle, and an idle
//! strategy decides what an empty pass does.

use crate::conn::{Acceptor, Conn, Engine};
use crate::options::{Idle, Model, Options};
use crate::queue::Spsc;
use crate::sys::{self, EpollEvent, Fd, Io};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Set by SIGTERM/SIGINT: every thread finishes its pass, logs out and exits.
pub static STOP: AtomicBool = AtomicBool::new(false);

fn stopping() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Session timers run this often.
const TIMER_NS: i64 = 100_000_000;
/// How long a stopping server waits for the Logout answers.
const LOGOUT_WAIT_NS: i64 = 1_000_000_000;
/// Block: the longest sleep in the kernel, so that a stop is seen in time.
const BLOCK_MS: i32 = 100;

/// The line the lab reads at exit: polls, empty share, busy share, busy time per order.
struct Load {
    polls: u64,
    empty: u64,
    busy: u64,
    last: u64,
    t0: u64,
    t0_ns: i64,
}

impl Load {
    fn start() -> Load {
        let t = sys::ticks();
        Load { polls: 0, empty: 0, busy: 0, last: t, t0: t, t0_ns: sys::monotonic_ns() }
    }
    #[inline(always)]
    fn pass(&mut self, work: bool) {
        let now = sys::ticks();
        self.polls += 1;
        if work {
            self.busy += now - self.last;
        } else {
            self.empty += 1;
        }
        self.last = now;
    }
    fn report(&self, name: &str, orders: u64) {
        let total_s = (sys::monotonic_ns() - self.t0_ns) as f64 * 1e-9;
        let ticks = sys::ticks() - self.t0;
        let busy_s = if ticks > 0 { self.busy as f64 * total_s / ticks as f64 } else { 0.0 };
        let pct = |a: f64, b: f64| if b > 0.0 { 100.0 * a / b } else { 0.0 };
        eprintln!(
            "server load: {} polls={} empty={:.1}% busy={:.1}% busy/order={:.2} us orders={}",
            name,
            self.polls,
            pct(self.empty as f64, self.polls as f64),
            pct(busy_s, total_s),
            if orders > 0 { busy_s * 1e6 / orders as f64 } else { 0.0 },
            orders
        );
    }
}

struct IdleStrategy {
    idle: Idle,
    empty: u32,
}

impl IdleStrategy {
    /// After a pass: spin, or yield the core after a run of empty passes.
    #[inline(always)]
    fn after(&mut self, work: bool) {
        if work {
            self.empty = 0;
            return;
        }
        match self.idle {
            Idle::Spin => std::hint::spin_loop(),
            Idle::SpinYield => {
                self.empty = self.empty.saturating_add(1);
                if self.empty > 1000 {
                    sys::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            Idle::Block => {}
        }
    }
    /// How long a readiness call may sleep.
    fn wait_ms(&self) -> i32 {
        if self.idle == Idle::Block {
            BLOCK_MS
        } else {
            0
        }
    }
}

/// Sends what is pending; false when the connection is dead.
fn flush(c: &mut Conn, fd: Fd) -> bool {
    while !c.pending().is_empty() {
        match sys::send_some(fd, c.pending()) {
            Io::Done(n) => c.sent(n),
            Io::Again => return true,
            Io::Closed => return false,
        }
    }
    true
}

fn now_ms() -> i64 {
    sys::monotonic_ns() / 1_000_000
}

/// One pass over one connection: read what is there, handle it, send the
/// replies. Returns (did work, still open).
#[inline]
fn service(c: &mut Conn, fd: Fd, e: &mut Engine, a: &Acceptor) -> (bool, bool) {
    let mut work = false;
    if c.closing.is_none() && !c.backed_up() {
        match sys::recv_some(fd, c.rx_space()) {
            Io::Done(n) => {
                c.received(n);
                c.process(e, a, sys::realtime_ns(), now_ms());
                work = true;
            }
            Io::Again => {}
            Io::Closed => {
                c.closing = Some("");
                return (true, false);
            }
        }
    }
    if !flush(c, fd) {
        return (work, false);
    }
    (work, c.closing.is_none() || !c.pending().is_empty())
}

fn closed(thread: &str, c: &mut Conn, a: &Acceptor) {
    if let (Some(k), Some(why)) = (c.session.counterparty(), c.closing) {
        if !why.is_empty() {
            println!("{}: session {} closed: {}", thread, String::from_utf8_lossy(&a.directory.comp_id(k)), why);
        }
    }
    c.session.end(&a.directory);
}

/// single: one connection at a time, read in the duty cycle without a
/// readiness call (with `block`, poll(2) sleeps until it is readable).
fn run_single(o: &Options, a: &Acceptor, listener: Fd) {
    const NAME: &str = "kite-single";
    let mut e = Engine::default();
    let mut c = Box::new(Conn::default());
    let mut idle = IdleStrategy { idle: o.idle, empty: 0 };
    let mut load = Load::start();
    while !stopping() {
        if !sys::wait_readable(listener, BLOCK_MS) {
            continue;
        }
        let fd = match sys::accept(listener) {
            Some(fd) => fd,
            None => continue,
        };
        sys::tune_socket(fd, o.busy_poll_usecs);
        c.reset();
        let mut next_timer = sys::monotonic_ns() + TIMER_NS;
        let mut open = true;
        let mut passes: u32 = 0;
        while open && !stopping() {
            if o.idle == Idle::Block {
                sys::wait_readable(fd, BLOCK_MS);
            }
            let (work, alive) = service(&mut c, fd, &mut e, a);
            open = alive;
            passes = passes.wrapping_add(1);
            if !work && passes % 1024 == 0 || o.idle == Idle::Block {
                let now = sys::monotonic_ns();
                if now >= next_timer {
                    next_timer = now + TIMER_NS;
                    c.on_timer(&mut e, a, sys::realtime_ns(), now / 1_000_000);
                }
            }
            load.pass(work);
            idle.after(work);
        }
        if open {
            let mut conns = [(fd, &mut *c)];
            shut_down(&mut conns, &mut e, a);
        }
        closed(NAME, &mut c, a);
        sys::close_fd(fd);
    }
    load.report(NAME, e.orders);
}

/// Logout to every logged-on session, then wait a while for the answers.
fn shut_down(conns: &mut [(Fd, &mut Conn)], e: &mut Engine, a: &Acceptor) {
    let t0 = sys::monotonic_ns();
    let mut open: Vec<bool> = conns
        .iter_mut()
        .map(|(fd, c)| c.shut_down(e, a, sys::realtime_ns(), t0 / 1_000_000) && flush(c, *fd))
        .collect();
    while open.iter().any(|&o| o) && sys::monotonic_ns() - t0 < LOGOUT_WAIT_NS {
        let mut work = false;
        for (i, (fd, c)) in conns.iter_mut().enumerate() {
            if open[i] {
                let (w, alive) = service(c, *fd, e, a);
                work |= w;
                open[i] = alive;
            }
        }
        if !work {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

const LISTENER: u64 = u64::MAX;

/// The duty cycle of mono, pool and shard threads: one epoll set.
struct Worker<'a> {
    name: String,
    o: &'a Options,
    a: &'a Acceptor,
    ep: sys::Epoll,
    listener: Option<Fd>,
    inbox: Option<Arc<Spsc<Fd>>>,
    load: Option<Arc<AtomicUsize>>,
    conns: Vec<Option<(Fd, Box<Conn>)>>,
    // Boxed: a connection moves between its slot and the spares as a pointer.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Conn>>,
    e: Engine,
}

impl<'a> Worker<'a> {
    fn new(name: String, o: &'a Options, a: &'a Acceptor, listener: Option<Fd>) -> Result<Worker<'a>, String> {
        let ep = sys::Epoll::new()?;
        if let Some(l) = listener {
            if !ep.add(l, LISTENER) {
                return Err(format!("{}: cannot watch the listener", name));
            }
        }
        Ok(Worker {
            name,
            o,
            a,
            ep,
            listener,
            inbox: None,
            load: None,
            conns: Vec::with_capacity(o.sessions + 4),
            spare: Vec::new(),
            e: Engine::default(),
        })
    }

    fn adopt(&mut self, fd: Fd) {
        sys::tune_socket(fd, self.o.busy_poll_usecs);
        let slot = match self.conns.iter().position(|c| c.is_none()) {
            Some(i) => i,
            None => {
                self.conns.push(None);
                self.conns.len() - 1
            }
        };
        let mut c = self.spare.pop().unwrap_or_default();
        c.reset();
        if !self.ep.add(fd, slot as u64) {
            println!("{}: cannot watch a new connection; closed", self.name);
            sys::close_fd(fd);
            self.spare.push(c);
            if let Some(l) = &self.load {
                l.fetch_sub(1, Ordering::Relaxed);
            }
            return;
        }
        self.conns[slot] = Some((fd, c));
    }

    fn drop_conn(&mut self, slot: usize) {
        if let Some((fd, mut c)) = self.conns[slot].take() {
            self.ep.remove(fd);
            closed(&self.name, &mut c, self.a);
            sys::close_fd(fd);
            self.spare.push(c);
            if let Some(l) = &self.load {
                l.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }

    fn run(&mut self) {
        let mut idle = IdleStrategy { idle: self.o.idle, empty: 0 };
        let mut load = Load::start();
        let mut events = [EpollEvent::EMPTY; 64];
        let mut next_timer = sys::monotonic_ns() + TIMER_NS;
        let mut passes: u32 = 0;
        while !stopping() {
            let mut work = false;
            if let Some(q) = self.inbox.clone() {
                while let Some(fd) = q.pop() {
                    self.adopt(fd);
                    work = true;
                }
            }
            let n = self.ep.wait(&mut events, idle.wait_ms());
            for ev in events.iter().take(n) {
                let token = ev.token();
                if token == LISTENER {
                    while let Some(fd) = self.listener.and_then(sys::accept) {
                        self.adopt(fd);
                    }
                    work = true;
                    continue;
                }
                let slot = token as usize;
                let alive = match self.conns.get_mut(slot) {
                    Some(Some((fd, c))) => {
                        let (w, alive) = service(c, *fd, &mut self.e, self.a);
                        work |= w;
                        alive
                    }
                    _ => true,
                };
                if !alive {
                    self.drop_conn(slot);
                }
            }
            // Replies the kernel had no room for, and sessions held back by them.
            for slot in 0..self.conns.len() {
                let stalled = matches!(&self.conns[slot], Some((_, c)) if !c.pending().is_empty());
                if stalled {
                    let alive = match &mut self.conns[slot] {
                        Some((fd, c)) => service(c, *fd, &mut self.e, self.a).1,
                        None => true,
                    };
                    if !alive {
                        self.drop_conn(slot);
                    }
                }
            }
            passes = passes.wrapping_add(1);
            if !work && passes % 1024 == 0 || idle.idle == Idle::Block {
                let now = sys::monotonic_ns();
                if now >= next_timer {
                    next_timer = now + TIMER_NS;
                    self.timers(now);
                }
            }
            load.pass(work);
            idle.after(work);
        }
        let (e, a) = (&mut self.e, self.a);
        let mut open: Vec<(Fd, &mut Conn)> = self.conns.iter_mut().flatten().map(|(fd, c)| (*fd, &mut **c)).collect();
        shut_down(&mut open, e, a);
        for slot in 0..self.conns.len() {
            self.drop_conn(slot);
        }
        load.report(&self.name, self.e.orders);
    }

    fn timers(&mut self, now: i64) {
        for slot in 0..self.conns.len() {
            let alive = match &mut self.conns[slot] {
                Some((fd, c)) => {
                    c.on_timer(&mut self.e, self.a, sys::realtime_ns(), now / 1_000_000);
                    service(c, *fd, &mut self.e, self.a).1
                }
                None => true,
            };
            if !alive {
                self.drop_conn(slot);
            }
        }
    }
}

/// pool: accepts and hands each session to the least loaded worker with room;
/// waits when every worker is full.
fn run_front(o: &Options, listener: Fd, inboxes: &[Arc<Spsc<Fd>>], loads: &[Arc<AtomicUsize>]) {
    let room = (o.sessions + o.workers - 1) / o.workers;
    while !stopping() {
        if !sys::wait_readable(listener, BLOCK_MS) {
            continue;
        }
        let best = (0..loads.len())
            .filter(|&i| loads[i].load(Ordering::Relaxed) < room)
            .min_by_key(|&i| loads[i].load(Ordering::Relaxed));
        let w = match best {
            Some(w) => w,
            None => {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
        };
        if let Some(fd) = sys::accept(listener) {
            loads[w].fetch_add(1, Ordering::Relaxed);
            let mut item = fd;
            while let Err(back) = inboxes[w].push(item) {
                item = back;
                if stopping() {
                    sys::close_fd(item);
                    break;
                }
                std::thread::sleep(Duration::from_micros(100));
            }
        }
    }
}

/// What each thread reports once it is named and pinned.
struct Startup {
    up: AtomicUsize,
    errors: Mutex<Vec<String>>,
}

fn become_role(name: &str, core: Option<usize>, s: &Startup) -> bool {
    sys::name_this_thread(name);
    if let Some(c) = core {
        if let Err(e) = sys::pin_this_thread(c) {
            s.errors.lock().unwrap().push(format!("{}: {}", name, e));
            s.up.fetch_add(1, Ordering::Release);
            return false;
        }
    }
    s.up.fetch_add(1, Ordering::Release);
    true
}

fn write_ready_file(path: &str, port: u16) -> Result<(), String> {
    if path.is_empty() {
        return Ok(());
    }
    let tmp = format!("{}.tmp", path);
    std::fs::write(&tmp, format!("{}\n", port)).and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write the ready file {}: {}", path, e))
}

type Role<'a> = Box<dyn FnOnce() + Send + 'a>;

fn spawn_in<'scope, 'env>(scope: &'scope std::thread::Scope<'scope, 'env>, name: String, f: Role<'scope>) -> Result<(), String> {
    std::thread::Builder::new()
        .name(name)
        .spawn_scoped(scope, f)
        .map(|_| ())
        .map_err(|e| format!("cannot start a thread: {}", e))
}

/// Serves until SIGTERM/SIGINT; an error is a set-up failure.
pub fn run(o: &Options) -> Result<(), String> {
    let workers = if o.model == Model::Single || o.model == Model::Mono { 1 } else { o.workers };
    let listeners_wanted = if o.model == Model::Shard { workers } else { 1 };
    let mut listeners = Vec::new();
    let mut port = o.port;
    for _ in 0..listeners_wanted {
        let (fd, p) = sys::listen_tcp(o.bind, port, o.model == Model::Shard)?;
        port = p;
        listeners.push(fd);
    }
    let first_id = (sys::realtime_ns() / 1000) as u64;
    let acceptor = Acceptor::new("KITE", "BENCH", o.sessions, first_id);
    let core = |i: usize| if o.cores.is_empty() { None } else { Some(o.cores[i % o.cores.len()]) };
    let startup = Startup { up: AtomicUsize::new(0), errors: Mutex::new(Vec::new()) };
    let result = std::thread::scope(|scope| -> Result<(), String> {
        let (a, s) = (&acceptor, &startup);
        let mut threads = 0;
        let spawn = |name: String, f| spawn_in(scope, name, f);
        match o.model {
            Model::Single => {
                let l = listeners[0];
                spawn("kite-single".into(), Box::new(move || {
                    if become_role("kite-single", core(0), s) {
                        run_single(o, a, l);
                    }
                }))?;
                threads += 1;
            }
            Model::Mono | Model::Shard => {
                for (i, &l) in listeners.iter().enumerate() {
                    let name = if o.model == Model::Mono { "kite-mono".to_string() } else { format!("kite-shard-{}", i) };
                    let mut w = Worker::new(name.clone(), o, a, Some(l))?;
                    spawn(name.clone(), Box::new(move || {
                        if become_role(&name, core(i), s) {
                            w.run();
                        }
                    }))?;
                    threads += 1;
                }
            }
            Model::Pool => {
                let inboxes: Vec<Arc<Spsc<Fd>>> = (0..workers).map(|_| Arc::new(Spsc::new(64))).collect();
                let loads: Vec<Arc<AtomicUsize>> = (0..workers).map(|_| Arc::new(AtomicUsize::new(0))).collect();
                for i in 0..workers {
                    let name = format!("kite-pool-{}", i);
                    let mut w = Worker::new(name.clone(), o, a, None)?;
                    w.inbox = Some(inboxes[i].clone());
                    w.load = Some(loads[i].clone());
                    spawn(name.clone(), Box::new(move || {
                        if become_role(&name, core(i), s) {
                            w.run();
                        }
                    }))?;
                    threads += 1;
                }
                let l = listeners[0];
                let front_core = o.coordinator_core;
                spawn("kite-front".into(), Box::new(move || {
                    if become_role("kite-front", front_core, s) {
                        run_front(o, l, &inboxes, &loads);
                    }
                }))?;
                threads += 1;
            }
        }
        // Ready once every thread runs named and pinned; connections wait in the backlog.
        while s.up.load(Ordering::Acquire) < threads {
            std::thread::sleep(Duration::from_millis(1));
        }
        let errors = s.errors.lock().unwrap().clone();
        if !errors.is_empty() {
            STOP.store(true, Ordering::Relaxed);
            return Err(errors.join("; "));
        }
        if let Err(e) = write_ready_file(&o.ready_file, port) {
            STOP.store(true, Ordering::Relaxed);
            return Err(e);
        }
        while !stopping() {
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    });
    for fd in listeners {
        sys::close_fd(fd);
    }
    result
}
