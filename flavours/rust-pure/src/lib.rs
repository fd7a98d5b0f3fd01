//! Kite's engine core in Rust (the lab's `rust-pure` flavour): codec, session,
//! ack application and kernel TCP acceptor models, on the standard library alone.

pub mod clock;
pub mod codec;
pub mod conn;
pub mod options;
pub mod queue;
pub mod server;
pub mod session;
pub mod swar;
pub mod sys;
#[cfg(test)]
pub mod testrand;
