//! rust_pure: the lab's `rust-pure` flavour server (docs/flavours.md).

use rust_pure::options::{self, Parsed};
use rust_pure::{server, sys};
use std::os::raw::c_int;
use std::sync::atomic::Ordering;

extern "C" fn on_stop_signal(_: c_int) {
    server::STOP.store(true, Ordering::Relaxed);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match options::parse(&args) {
        Ok(Parsed::Run(o)) => o,
        Ok(Parsed::Version) => {
            println!(
                "rust_pure version={} git={} compiler=\"{}\" flags=\"{}\" profile={} target={}",
                env!("CARGO_PKG_VERSION"),
                env!("RUST_PURE_GIT"),
                env!("RUST_PURE_RUSTC"),
                env!("RUST_PURE_FLAGS"),
                env!("RUST_PURE_PROFILE"),
                env!("RUST_PURE_TARGET")
            );
            return;
        }
        Ok(Parsed::Help) => {
            println!("{}", options::USAGE);
            return;
        }
        Err(e) => {
            eprintln!("rust_pure: {}\n{}", e, options::USAGE);
            std::process::exit(1);
        }
    };
    if let Some(why) = options::unsupported(&o) {
        eprintln!("unsupported: {}", why);
        std::process::exit(3);
    }
    sys::on_stop_signals(on_stop_signal);
    if let Err(e) = server::run(&o) {
        eprintln!("rust_pure: {}", e);
        std::process::exit(1);
    }
}
