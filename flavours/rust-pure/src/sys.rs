//! The C library edge: every libc function the engine calls, declared here and
//! wrapped once in a small safe function. Nothing outside this module uses `unsafe`
//! except the queue's slots (src/queue.rs).

use std::os::raw::{c_int, c_long, c_ulong, c_void};

pub type Fd = c_int;

pub const EINTR: c_int = 4;
pub const EAGAIN: c_int = 11;

const AF_INET: c_int = 2;
const SOCK_STREAM: c_int = 1;
const SOCK_NONBLOCK: c_int = 0o4000;
const SOCK_CLOEXEC: c_int = 0o2000000;
const SOL_SOCKET: c_int = 1;
const SO_REUSEADDR: c_int = 2;
const SO_REUSEPORT: c_int = 15;
const SO_BUSY_POLL: c_int = 46;
const IPPROTO_TCP: c_int = 6;
const TCP_NODELAY: c_int = 1;
const MSG_NOSIGNAL: c_int = 0x4000;
const EPOLL_CLOEXEC: c_int = 0o2000000;
const EPOLL_CTL_ADD: c_int = 1;
const EPOLL_CTL_DEL: c_int = 2;
pub const EPOLLIN: u32 = 1;
const POLLIN: i16 = 1;
const PR_SET_NAME: c_int = 15;
const CLOCK_REALTIME: c_int = 0;
const CLOCK_MONOTONIC: c_int = 1;
pub const SIGINT: c_int = 2;
pub const SIGTERM: c_int = 15;
const SIGPIPE: c_int = 13;
const SIG_IGN: usize = 1;

#[repr(C)]
struct SockaddrIn {
    family: u16,
    port: u16, // network order
    addr: u32, // network order
    zero: [u8; 8],
}

/// The kernel's `struct epoll_event`: packed on x86-64.
#[cfg_attr(target_arch = "x86_64", repr(C, packed))]
#[cfg_attr(not(target_arch = "x86_64"), repr(C))]
#[derive(Clone, Copy)]
pub struct EpollEvent {
    pub events: u32,
    pub data: u64,
}

impl EpollEvent {
    pub const EMPTY: EpollEvent = EpollEvent { events: 0, data: 0 };
    pub fn token(&self) -> u64 {
        self.data
    }
}

#[repr(C)]
struct PollFd {
    fd: c_int,
    events: i16,
    revents: i16,
}

#[repr(C)]
struct Timespec {
    sec: c_long,
    nsec: c_long,
}

extern "C" {
    fn socket(domain: c_int, ty: c_int, protocol: c_int) -> c_int;
    fn setsockopt(fd: c_int, level: c_int, name: c_int, value: *const c_void, len: u32) -> c_int;
    fn getsockname(fd: c_int, addr: *mut SockaddrIn, len: *mut u32) -> c_int;
    fn bind(fd: c_int, addr: *const SockaddrIn, len: u32) -> c_int;
    fn listen(fd: c_int, backlog: c_int) -> c_int;
    fn accept4(fd: c_int, addr: *mut c_void, len: *mut u32, flags: c_int) -> c_int;
    fn recv(fd: c_int, buf: *mut c_void, len: usize, flags: c_int) -> isize;
    fn send(fd: c_int, buf: *const c_void, len: usize, flags: c_int) -> isize;
    fn close(fd: c_int) -> c_int;
    fn epoll_create1(flags: c_int) -> c_int;
    fn epoll_ctl(ep: c_int, op: c_int, fd: c_int, event: *mut EpollEvent) -> c_int;
    fn epoll_wait(ep: c_int, events: *mut EpollEvent, max: c_int, timeout_ms: c_int) -> c_int;
    fn poll(fds: *mut PollFd, n: c_ulong, timeout_ms: c_int) -> c_int;
    fn sched_setaffinity(pid: c_int, size: usize, mask: *const u64) -> c_int;
    fn sched_yield() -> c_int;
    fn prctl(option: c_int, arg2: c_ulong, arg3: c_ulong, arg4: c_ulong, arg5: c_ulong) -> c_int;
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
    fn signal(sig: c_int, handler: usize) -> usize;
    fn __errno_location() -> *mut c_int;
}

/// The calling thread's errno.
pub fn errno() -> c_int {
    // SAFETY: __errno_location returns the calling thread's errno slot, always valid.
    unsafe { *__errno_location() }
}

fn os_error(what: &str) -> String {
    format!("{}: {}", what, std::io::Error::from_raw_os_error(errno()))
}

fn set_int(fd: Fd, level: c_int, name: c_int, value: c_int) -> bool {
    // SAFETY: value lives across the call and len is its size.
    unsafe { setsockopt(fd, level, name, &value as *const c_int as *const c_void, 4) == 0 }
}

/// A non-blocking TCP listener on ip:port (port 0: any); returns it and the bound port.
pub fn listen_tcp(ip: [u8; 4], port: u16, reuse_port: bool) -> Result<(Fd, u16), String> {
    // SAFETY: plain socket call.
    let fd = unsafe { socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_error("socket"));
    }
    set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
    if reuse_port && !set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1) {
        let e = os_error("SO_REUSEPORT");
        close_fd(fd);
        return Err(e);
    }
    let mut a = SockaddrIn { family: AF_INET as u16, port: port.to_be(), addr: u32::from_be_bytes(ip).to_be(), zero: [0; 8] };
    let size = std::mem::size_of::<SockaddrIn>() as u32;
    // SAFETY: a is a valid sockaddr_in of the given size.
    if unsafe { bind(fd, &a, size) } != 0 || unsafe { listen(fd, 1024) } != 0 {
        let e = os_error(&format!("cannot listen on {}.{}.{}.{}:{}", ip[0], ip[1], ip[2], ip[3], port));
        close_fd(fd);
        return Err(e);
    }
    let mut len = size;
    // SAFETY: a and len are valid for writing.
    unsafe { getsockname(fd, &mut a, &mut len) };
    Ok((fd, u16::from_be(a.port)))
}

/// Accepts one pending connection, non-blocking; None when there is none.
pub fn accept(listener: Fd) -> Option<Fd> {
    // SAFETY: null address pointers are allowed.
    let fd = unsafe { accept4(listener, std::ptr::null_mut(), std::ptr::null_mut(), SOCK_NONBLOCK | SOCK_CLOEXEC) };
    if fd < 0 {
        None
    } else {
        Some(fd)
    }
}

/// TCP_NODELAY, and SO_BUSY_POLL when above 0. False when a setting failed.
pub fn tune_socket(fd: Fd, busy_poll_usecs: i32) -> bool {
    let nodelay = set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    nodelay && (busy_poll_usecs <= 0 || set_int(fd, SOL_SOCKET, SO_BUSY_POLL, busy_poll_usecs))
}

pub enum Io {
    Done(usize),
    Again,
    Closed,
}

/// One non-blocking recv into buf.
pub fn recv_some(fd: Fd, buf: &mut [u8]) -> Io {
    loop {
        // SAFETY: buf is valid for buf.len() bytes of writing.
        let n = unsafe { recv(fd, buf.as_mut_ptr() as *mut c_void, buf.len(), 0) };
        if n > 0 {
            return Io::Done(n as usize);
        }
        if n == 0 {
            return Io::Closed;
        }
        match errno() {
            EINTR => continue,
            EAGAIN => return Io::Again,
            _ => return Io::Closed,
        }
    }
}

/// One non-blocking send of buf (no SIGPIPE).
pub fn send_some(fd: Fd, buf: &[u8]) -> Io {
    loop {
        // SAFETY: buf is valid for buf.len() bytes of reading.
        let n = unsafe { send(fd, buf.as_ptr() as *const c_void, buf.len(), MSG_NOSIGNAL) };
        if n >= 0 {
            return Io::Done(n as usize);
        }
        match errno() {
            EINTR => continue,
            EAGAIN => return Io::Again,
            _ => return Io::Closed,
        }
    }
}

pub fn close_fd(fd: Fd) {
    // SAFETY: the caller owns fd and does not use it again.
    unsafe { close(fd) };
}

/// Waits up to timeout_ms for fd to be readable; true when it is.
pub fn wait_readable(fd: Fd, timeout_ms: i32) -> bool {
    let mut p = PollFd { fd, events: POLLIN, revents: 0 };
    // SAFETY: one valid pollfd.
    unsafe { poll(&mut p, 1, timeout_ms) > 0 }
}

/// An epoll set, closed on drop.
pub struct Epoll(Fd);

impl Epoll {
    pub fn new() -> Result<Epoll, String> {
        // SAFETY: plain call.
        let fd = unsafe { epoll_create1(EPOLL_CLOEXEC) };
        if fd < 0 {
            Err(os_error("epoll_create1"))
        } else {
            Ok(Epoll(fd))
        }
    }
    pub fn add(&self, fd: Fd, token: u64) -> bool {
        let mut e = EpollEvent { events: EPOLLIN, data: token };
        // SAFETY: e is a valid event.
        unsafe { epoll_ctl(self.0, EPOLL_CTL_ADD, fd, &mut e) == 0 }
    }
    pub fn remove(&self, fd: Fd) {
        let mut e = EpollEvent::EMPTY;
        // SAFETY: e is a valid event (ignored by DEL on new kernels).
        unsafe { epoll_ctl(self.0, EPOLL_CTL_DEL, fd, &mut e) };
    }
    /// Ready events into `out`; 0 on timeout or EINTR.
    pub fn wait(&self, out: &mut [EpollEvent], timeout_ms: i32) -> usize {
        // SAFETY: out is valid for out.len() events.
        let n = unsafe { epoll_wait(self.0, out.as_mut_ptr(), out.len() as c_int, timeout_ms) };
        if n < 0 {
            0
        } else {
            n as usize
        }
    }
}

impl Drop for Epoll {
    fn drop(&mut self) {
        close_fd(self.0);
    }
}

/// Pins the calling thread to one core.
pub fn pin_this_thread(core: usize) -> Result<(), String> {
    let mut mask = [0u64; 16]; // cpu_set_t: 1024 bits
    if core >= 1024 {
        return Err(format!("core {} is beyond the 1024 a cpu_set_t holds", core));
    }
    mask[core / 64] |= 1u64 << (core % 64);
    // SAFETY: mask is a valid cpu_set_t of its size; pid 0 is the calling thread.
    if unsafe { sched_setaffinity(0, std::mem::size_of_val(&mask), mask.as_ptr()) } != 0 {
        return Err(os_error(&format!("cannot pin to core {}", core)));
    }
    Ok(())
}

/// Names the calling thread (15 characters at most; longer names are cut).
pub fn name_this_thread(name: &str) {
    let mut buf = [0u8; 16];
    let n = name.len().min(15);
    buf[..n].copy_from_slice(&name.as_bytes()[..n]);
    // SAFETY: buf is NUL-terminated and outlives the call.
    unsafe { prctl(PR_SET_NAME, buf.as_ptr() as c_ulong, 0, 0, 0) };
}

pub fn yield_now() {
    // SAFETY: plain call.
    unsafe { sched_yield() };
}

fn clock(id: c_int) -> i64 {
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: ts is valid for writing.
    unsafe { clock_gettime(id, &mut ts) };
    // c_long is i64 on the 64-bit targets served; the conversion keeps 32-bit ones building.
    #[allow(clippy::useless_conversion)]
    let ns = i64::from(ts.sec) * 1_000_000_000 + i64::from(ts.nsec);
    ns
}

/// Nanoseconds since the Unix epoch.
pub fn realtime_ns() -> i64 {
    clock(CLOCK_REALTIME)
}

/// Nanoseconds of the monotonic clock.
pub fn monotonic_ns() -> i64 {
    clock(CLOCK_MONOTONIC)
}

/// Routes SIGTERM and SIGINT to `handler` and ignores SIGPIPE. The handler must
/// be async-signal-safe (it stores to an atomic).
pub fn on_stop_signals(handler: extern "C" fn(c_int)) {
    // SAFETY: handler is a valid extern "C" function for the process's life.
    unsafe {
        signal(SIGTERM, handler as usize);
        signal(SIGINT, handler as usize);
        signal(SIGPIPE, SIG_IGN);
    }
}

/// A cheap cycle counter for busy-time accounting (the TSC on x86-64).
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86-64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns() as u64
    }
}
