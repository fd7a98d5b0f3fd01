//! Stamps the build into `rust_pure --version`: commit, compiler, profile, target.

use std::process::Command;

fn output(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = output(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    let git = output("git", &["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RUST_PURE_RUSTC={}", version);
    println!("cargo:rustc-env=RUST_PURE_GIT={}", git);
    println!("cargo:rustc-env=RUST_PURE_PROFILE={}", std::env::var("PROFILE").unwrap_or_default());
    // The lab reads flags= for its stamp (target-cpu=native marks a host-tuned build).
    let rustflags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default().replace('\x1f', " ");
    let flags = format!("opt-level={} {}", std::env::var("OPT_LEVEL").unwrap_or_default(), rustflags);
    println!("cargo:rustc-env=RUST_PURE_FLAGS={}", flags.trim());
    println!("cargo:rerun-if-env-changed=RUSTFLAGS");
    println!("cargo:rustc-env=RUST_PURE_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    println!("cargo:rerun-if-changed=build.rs");
    // A new commit changes HEAD or the branch it names. Only files that exist are
    // named: cargo reruns a script whose named file is missing every time.
    let mut watched = vec!["HEAD".to_string()];
    if let Some(branch) = output("git", &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = output("git", &["rev-parse", "--path-format=absolute", "--git-path", &name]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={}", path);
            }
        }
    }
}
