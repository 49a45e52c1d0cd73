//! Answers version questions with the `semver` crate, one per line, for the differential
//! test of nexo's version model. Every argument is hex-encoded UTF-8, so any text (tabs,
//! spaces, non-ASCII) travels intact.
//!
//!   V <version>            -> "ok <display>" or "err <message>"
//!   R <requirement>        -> "ok <display>" or "err <message>"
//!   C <version> <version>  -> "-1", "0" or "1" (`Ord::cmp`)
//!   M <requirement> <ver>  -> "true" or "false" (`VersionReq::matches`)

use semver::{Version, VersionReq};
use std::cmp::Ordering;
use std::io::{self, BufRead, Write};

fn unhex(text: &str) -> String {
    let bytes: Vec<u8> = (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect();
    String::from_utf8(bytes).expect("utf-8")
}

fn answer(line: &str) -> String {
    let mut words = line.split(' ');
    let command = words.next().unwrap_or("");
    let args: Vec<String> = words.map(unhex).collect();
    match command {
        "V" => match Version::parse(&args[0]) {
            Ok(version) => format!("ok {}", version),
            Err(error) => format!("err {}", error),
        },
        "R" => match VersionReq::parse(&args[0]) {
            Ok(req) => format!("ok {}", req),
            Err(error) => format!("err {}", error),
        },
        "C" => {
            let left = Version::parse(&args[0]).expect("version");
            let right = Version::parse(&args[1]).expect("version");
            match left.cmp(&right) {
                Ordering::Less => "-1".to_string(),
                Ordering::Equal => "0".to_string(),
                Ordering::Greater => "1".to_string(),
            }
        }
        "M" => {
            let req = VersionReq::parse(&args[0]).expect("requirement");
            let version = Version::parse(&args[1]).expect("version");
            req.matches(&version).to_string()
        }
        other => panic!("unknown command {:?}", other),
    }
}

fn main() {
    let stdin = io::stdin();
    let mut out = io::BufWriter::new(io::stdout().lock());
    for line in stdin.lock().lines() {
        let line = line.expect("stdin");
        writeln!(out, "{}", answer(&line)).expect("stdout");
    }
}
