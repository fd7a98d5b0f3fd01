//! The server's command line.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Model {
    Single,
    Mono,
    Pool,
    Shard,
}

/// What a thread does when a pass found no work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idle {
    /// Never sleep.
    Spin,
    /// Spin a while, then yield the core to the scheduler on every empty pass.
    SpinYield,
    /// Sleep in the kernel (poll/epoll_wait with a timeout) until there is work.
    Block,
}

#[derive(Debug, Clone)]
pub struct Options {
    pub model: Model,
    pub transport: String,
    pub bind: [u8; 4],
    pub port: u16,
    pub sessions: usize,
    pub workers: usize,
    pub cores: Vec<usize>,
    pub coordinator_core: Option<usize>,
    pub busy_poll_usecs: i32,
    pub idle: Idle,
    pub store: String,
    pub ready_file: String,
}

pub const USAGE: &str = "usage: rust_pure --model single|mono|pool|shard [--transport kernel] [--bind IPV4] [--port N]
                 [--sessions N] [--workers N] [--cores 1,2,3] [--coordinator-core N]
                 [--busy-poll-usecs N] [--idle spin|spin-yield|block] [--store null]
                 [--ready-file PATH]
       rust_pure --version";

pub enum Parsed {
    Run(Options),
    Version,
    Help,
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("{} wants a number, got '{}'", flag, v))
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Parsed, String> {
    let mut o = Options {
        model: Model::Single,
        transport: "kernel".into(),
        bind: [127, 0, 0, 1],
        port: 0,
        sessions: 1,
        workers: 1,
        cores: Vec::new(),
        coordinator_core: None,
        busy_poll_usecs: 0,
        idle: Idle::Spin,
        store: "null".into(),
        ready_file: String::new(),
    };
    let mut model = None;
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].as_str();
        match flag {
            "--version" => return Ok(Parsed::Version),
            "--help" | "-h" => return Ok(Parsed::Help),
            _ => {}
        }
        let v = match args.get(i + 1) {
            Some(v) => v.as_str(),
            None => return Err(format!("{} wants a value", flag)),
        };
        match flag {
            "--model" => {
                model = Some(match v {
                    "single" => Model::Single,
                    "mono" => Model::Mono,
                    "pool" => Model::Pool,
                    "shard" => Model::Shard,
                    _ => return Err(format!("--model is single, mono, pool or shard, not '{}'", v)),
                })
            }
            "--transport" => o.transport = v.to_string(),
            "--bind" => {
                let parts: Vec<&str> = v.split('.').collect();
                let bytes: Vec<u8> = parts.iter().filter_map(|p| p.parse().ok()).collect();
                if parts.len() != 4 || bytes.len() != 4 {
                    return Err(format!("--bind wants an IPv4 address, got '{}'", v));
                }
                o.bind = [bytes[0], bytes[1], bytes[2], bytes[3]];
            }
            "--port" => o.port = number(flag, v)?,
            "--sessions" => o.sessions = number(flag, v)?,
            "--workers" => o.workers = number(flag, v)?,
            "--cores" => {
                o.cores = if v.is_empty() {
                    Vec::new()
                } else {
                    v.split(',').map(|c| number(flag, c.trim())).collect::<Result<_, _>>()?
                }
            }
            "--coordinator-core" => {
                let c: i64 = number(flag, v)?;
                o.coordinator_core = if c < 0 { None } else { Some(c as usize) };
            }
            "--busy-poll-usecs" => o.busy_poll_usecs = number(flag, v)?,
            "--idle" => {
                o.idle = match v {
                    "spin" => Idle::Spin,
                    "spin-yield" => Idle::SpinYield,
                    "block" => Idle::Block,
                    _ => return Err(format!("--idle is spin, spin-yield or block, not '{}'", v)),
                }
            }
            "--store" => o.store = v.to_string(),
            "--store-dir" => {}
            "--ready-file" => o.ready_file = v.to_string(),
            _ => return Err(format!("unknown option {}", flag)),
        }
        i += 2;
    }
    o.model = model.ok_or_else(|| "--model is required".to_string())?;
    if o.sessions == 0 {
        return Err("--sessions must be at least 1".into());
    }
    if o.workers == 0 {
        return Err("--workers must be at least 1".into());
    }
    if o.busy_poll_usecs < 0 {
        return Err("--busy-poll-usecs must not be negative".into());
    }
    Ok(Parsed::Run(o))
}

/// Why this build cannot serve the options (the lab's `unsupported:` line), if it cannot.
pub fn unsupported(o: &Options) -> Option<String> {
    // onload and vma run this same binary under their preload launcher.
    if !matches!(o.transport.as_str(), "kernel" | "onload" | "vma") {
        return Some(format!("transport {}: rust-pure serves kernel sockets (onload and vma by preload)", o.transport));
    }
    if o.store != "null" {
        return Some(format!("store {}: rust-pure keeps no message store (a ResendRequest is answered with a gap fill)", o.store));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_the_lab_arguments() {
        let p = parse(&args("--model pool --transport kernel --bind 127.0.0.1 --port 0 --sessions 32 --workers 2 --cores 3,4 --coordinator-core 2 --busy-poll-usecs 50 --idle block --store null --ready-file /r")).unwrap();
        match p {
            Parsed::Run(o) => {
                assert_eq!(o.model, Model::Pool);
                assert_eq!(o.cores, vec![3, 4]);
                assert_eq!(o.coordinator_core, Some(2));
                assert_eq!(o.idle, Idle::Block);
                assert_eq!(o.busy_poll_usecs, 50);
                assert!(unsupported(&o).is_none());
            }
            _ => panic!(),
        }
    }

    #[test]
    fn names_what_is_wrong() {
        let e = |s: &str| match parse(&args(s)) {
            Err(e) => e,
            Ok(_) => panic!("{} parsed", s),
        };
        assert!(e("--model twin").contains("single, mono"));
        assert!(e("--port").contains("wants a value"));
        assert!(e("--model single --cores 1,x").contains("wants a number"));
        assert!(e("--model single --bind localhost").contains("IPv4"));
        assert!(e("--sessions 2").contains("--model is required"));
        assert!(e("--model single --colour red").contains("unknown option"));
    }

    #[test]
    fn refuses_transports_and_stores_it_lacks() {
        if let Ok(Parsed::Run(o)) = parse(&args("--model single --transport uring")) {
            assert!(unsupported(&o).unwrap().starts_with("transport uring"));
        }
        if let Ok(Parsed::Run(o)) = parse(&args("--model single --store file")) {
            assert!(unsupported(&o).unwrap().starts_with("store file"));
        }
    }
}
