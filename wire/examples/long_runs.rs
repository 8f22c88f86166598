//! Long runs (issue 26): `budget_run` through the JSON API (text in, `summary: true`) with 10^4,
//! 10^5 and 10^6 events, and `simulate_storm` with 10^3 to 10^6 requests, each size in a process
//! of its own so its peak memory (VmHWM) is its own. Prints time per event or request, peak memory,
//! and the ratio of the largest size's time per event to the smallest's.
//!
//! `cargo run --release -p retrypolicy-wire --example long_runs` (`make bench` runs it).

use std::process::Command;
use std::time::Instant;

use retrypolicy::*;
use retrypolicy_wire::api::call_text;

/// The budgets replayed, as documents.
const BUDGETS: [(&str, &str); 3] = [
    (
        "token_bucket",
        r#"{"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}"#,
    ),
    ("retry_quota", r#"{"kind": "retry_quota"}"#),
    ("percentage", r#"{"kind": "percentage"}"#),
];

/// The peak resident memory of this process, in MB.
fn peak_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// One size of `budget_run`: the document's text, then the call; prints ns/event and peak MB.
fn budget_child(kind: usize, n: u64) {
    let mut text = format!(r#"{{"budget": {}, "summary": true, "events": ["#, BUDGETS[kind].1);
    for i in 0..n {
        // A request, a failure, a retry and a success after it, one millisecond apart.
        let event = match i % 4 {
            0 => "request",
            1 => "failure",
            2 => "retry",
            _ => "success",
        };
        if i > 0 {
            text.push(',');
        }
        text.push_str(&format!(r#"{{"at_ms": {i}, "kind": "{event}"}}"#));
    }
    text.push_str("]}");
    let start = Instant::now();
    let answer = call_text("budget_run", &text).expect("a valid run");
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(answer["summary"]["events"], n);
    println!("{ns} {}", peak_mb());
}

/// One size of `simulate_storm`: `n` requests at 10,000 a second, 5 % of attempts failing, gRPC's
/// bucket; prints ns/request and peak MB.
fn storm_child(n: u64) {
    let rps: u32 = 10_000;
    let storm: StormScenario = serde_json::from_value(serde_json::json!({
        "request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500},
        "reason": "KV_TEMPORARY_FAILURE",
        "requests_per_second": rps,
        "duration_ms": n * 1000 / u64::from(rps),
        "latency_ms": 10,
        "failure_rate": 0.05,
        "budget": {"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}
    }))
    .expect("a valid storm");
    let start = Instant::now();
    let report = simulate_storm(&storm).expect("a storm within bounds");
    let ns = start.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(report.requests, n);
    println!("{ns} {}", peak_mb());
}

/// Runs this program again as a child for one measurement; returns (ns per item, peak MB).
fn measure(args: &[String]) -> (f64, f64) {
    let out = Command::new(std::env::current_exe().expect("this program"))
        .args(args)
        .output()
        .expect("the child runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text
        .split_whitespace()
        .map(|p| p.parse::<f64>().unwrap_or(f64::NAN));
    (parts.next().unwrap_or(f64::NAN), parts.next().unwrap_or(f64::NAN))
}

fn table(title: &str, unit: &str, rows: &[(u64, (f64, f64))]) {
    println!("{title}");
    println!("  {:>9}  {:>12}  {:>12}", "size", format!("ns/{unit}"), "peak MB");
    for (n, (ns, mb)) in rows {
        println!("  {n:>9}  {ns:>12.1}  {mb:>12.1}");
    }
    let (first, last) = (rows[0].1 .0, rows[rows.len() - 1].1 .0);
    println!(
        "  largest / smallest size, time per {unit}: {:.2}x (budget 1.3x); peak at the largest: {:.1} MB (budget 100 MB)",
        last / first,
        rows[rows.len() - 1].1 .1
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [mode, kind, n] if mode == "budget" => {
            return budget_child(kind.parse().unwrap(), n.parse().unwrap())
        }
        [mode, n] if mode == "storm" => return storm_child(n.parse().unwrap()),
        _ => {}
    }
    for (k, (name, _)) in BUDGETS.iter().enumerate() {
        let rows: Vec<(u64, (f64, f64))> = [10_000u64, 100_000, 1_000_000]
            .iter()
            .map(|&n| (n, measure(&["budget".into(), k.to_string(), n.to_string()])))
            .collect();
        table(
            &format!("budget_run ({name}, JSON text in, summary)"),
            "event",
            &rows,
        );
    }
    let rows: Vec<(u64, (f64, f64))> = [1_000u64, 10_000, 100_000, 1_000_000]
        .iter()
        .map(|&n| (n, measure(&["storm".into(), n.to_string()])))
        .collect();
    table(
        "simulate_storm (5 % of attempts fail, gRPC's bucket)",
        "request",
        &rows,
    );
}
