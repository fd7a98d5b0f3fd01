//! The shared frame vectors (tests/vectors/frames.txt at the repository's
//! root), which Kite's C++ codec and the other pure flavours read too.

use rust_pure::codec::{self, Frame, Index};
use std::path::PathBuf;

struct Vector {
    name: String,
    frame: Vec<u8>,
    expect: String,
    size: usize,
    fields: String,
}

fn read_vectors() -> Vec<Vector> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/vectors/frames.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut v = Vector { name: String::new(), frame: Vec::new(), expect: String::new(), size: 0, fields: String::new() };
        for line in block.lines().filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (key, value) = line.split_once(": ").unwrap_or_else(|| panic!("not `key: value`: {line}"));
            match key {
                "name" => v.name = value.to_string(),
                "frame" => v.frame = value.bytes().map(|c| if c == b'|' { codec::SOH } else { c }).collect(),
                "expect" => v.expect = value.to_string(),
                "size" => v.size = value.parse().unwrap(),
                "fields" => v.fields = value.to_string(),
                _ => panic!("unknown key {key}"),
            }
        }
        if !v.name.is_empty() {
            out.push(v);
        }
    }
    out
}

fn body_fields(frame: &[u8], ix: &Index) -> String {
    let parts: Vec<String> =
        ix.fields().iter().map(|f| format!("{}={}", f.tag, String::from_utf8_lossy(codec::value(frame, *f)))).collect();
    parts.join("|")
}

#[test]
fn framer_and_index_agree_with_every_vector() {
    let vectors = read_vectors();
    assert!(vectors.len() >= 8, "only {} vectors read", vectors.len());
    let mut ix = Index::default();
    for v in &vectors {
        match (codec::frame(&v.frame), v.expect.as_str()) {
            (Frame::Garbled { size }, "bad-checksum") => assert_eq!(size, v.size, "{}", v.name),
            (Frame::Complete { size, body_start }, "complete") => {
                assert_eq!(size, v.size, "{}", v.name);
                codec::walk(&v.frame, body_start, size - 7, &mut ix).unwrap_or_else(|e| panic!("{}: {e:?}", v.name));
                assert_eq!(body_fields(&v.frame, &ix), v.fields, "{}", v.name);
            }
            (Frame::Complete { size, body_start }, "bad-field") => {
                assert_eq!(size, v.size, "{}", v.name);
                assert!(codec::walk(&v.frame, body_start, size - 7, &mut ix).is_err(), "{}", v.name);
            }
            (got, want) => panic!("{}: framed {got:?}, the vector says {want}", v.name),
        }
    }
}

#[test]
fn every_strict_prefix_of_a_vector_is_incomplete() {
    for v in &read_vectors() {
        for n in 0..v.size {
            assert_eq!(codec::frame(&v.frame[..n]), Frame::Incomplete, "{} cut at {n}", v.name);
        }
    }
}
