//! The binary, end to end: each subcommand, JSONL streaming, and bad input exiting 2.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_retrypolicy"))
}

fn run(args: &[&str], stdin: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/scenarios")
}

const RFC_EXAMPLE: &str = r#"{"request": {"service": "kv", "operation": "upsert", "attempts": 7,
  "elapsed_ms": 2000, "timeout_ms": 2500}, "reason": "KV_NOT_MY_VBUCKET"}"#;

#[test]
fn decide_reads_json_on_stdin() {
    let out = run(&["decide"], RFC_EXAMPLE);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], "retry");
    assert_eq!(v["delay_ms"], 500);
    assert_eq!(v["then_cancel"], true);
}

#[test]
fn decide_streams_jsonl_one_decision_per_line() {
    let lines = [
        r#"{"request": {"service": "kv", "operation": "get", "attempts": 3, "elapsed_ms": 0, "timeout_ms": 2500}, "reason": "KV_LOCKED"}"#,
        r#"{"request": {"service": "kv", "operation": "upsert", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500}, "reason": "SOCKET_CLOSED_WHILE_IN_FLIGHT"}"#,
        r#"{"request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500}, "reason": "KV_LOCKED", "policy": {"strategy": "fail_fast"}}"#,
    ];
    let out = run(&["decide"], &lines.join("\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let got: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 3);
    assert_eq!(
        (got[0]["action"].as_str(), got[0]["delay_ms"].as_u64()),
        (Some("retry"), Some(8))
    );
    assert_eq!(got[1]["cause"], "not_idempotent");
    assert_eq!(got[2]["rule"], "fail_fast");
}

#[test]
fn decide_takes_flags() {
    let out = run(
        &[
            "decide",
            "--operation",
            "get",
            "--attempts",
            "2",
            "--timeout-ms",
            "2500",
            "--reason",
            "KV_NOT_MY_VBUCKET",
        ],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["delay_ms"], 50);
}

#[test]
fn explain_prints_one_sentence_with_rule_and_section() {
    let out = run(&["explain"], RFC_EXAMPLE);
    assert!(out.status.success());
    let s = text(&out.stdout);
    assert_eq!(s.lines().count(), 1);
    assert!(s.starts_with("Retry the KV upsert after 500 ms"), "{s}");
    assert!(
        s.contains("rule always_retry_controlled_backoff; RFC 0049"),
        "{s}"
    );
}

#[test]
fn simulate_prints_a_table_with_totals() {
    let path = scenarios().join("03-kv-get-temporary-failure-until-timeout.json");
    let out = run(&["simulate", path.to_str().unwrap()], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("=> timed out after 13 attempts: 2500 ms in all"),
        "{s}"
    );
    assert!(s.contains("463*"), "{s}");
    let json = run(&["simulate", "--json", path.to_str().unwrap()], "");
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["ending"], "timed_out");
}

#[test]
fn every_bundled_scenario_runs() {
    for entry in std::fs::read_dir(scenarios()).unwrap() {
        let path = entry.unwrap().path();
        let out = run(&["simulate", path.to_str().unwrap()], "");
        assert!(out.status.success(), "{}: {}", path.display(), text(&out.stderr));
    }
}

#[test]
fn the_counter_scenarios_show_naive_failing_and_idempotent_succeeding() {
    let naive = run(
        &[
            "simulate",
            scenarios()
                .join("05-counter-increment-naive.json")
                .to_str()
                .unwrap(),
        ],
        "",
    );
    assert!(text(&naive.stdout).contains("=> failed (not retried) after 1 attempt"));
    let idem = run(
        &[
            "simulate",
            scenarios()
                .join("06-counter-increment-idempotent.json")
                .to_str()
                .unwrap(),
        ],
        "",
    );
    assert!(text(&idem.stdout).contains("=> succeeded after 2 attempts"));
}

#[test]
fn bad_input_exits_2_naming_the_field() {
    let cases: [(&[&str], &str, &str); 6] = [
        (
            &["decide"],
            r#"{"request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": -1, "timeout_ms": 5}, "reason": "KV_LOCKED"}"#,
            "elapsed_ms",
        ),
        (
            &["decide"],
            r#"{"request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 5}, "reason": "NOPE"}"#,
            "reason",
        ),
        (&["decide"], "{not json", "malformed_json"),
        (
            &[
                "decide",
                "--operation",
                "get",
                "--timeout-ms",
                "-3",
                "--reason",
                "KV_LOCKED",
            ],
            "",
            "--timeout-ms",
        ),
        (
            &[
                "decide",
                "--operation",
                "gett",
                "--timeout-ms",
                "3",
                "--reason",
                "KV_LOCKED",
            ],
            "",
            "--operation",
        ),
        (&["explain"], "", "no input"),
    ];
    for (args, stdin, field) in cases {
        let out = run(args, stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?} {stdin}");
        assert!(
            text(&out.stderr).contains(field),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_bad_jsonl_line_is_reported_in_place_and_the_rest_still_decided() {
    let input = "{\"request\": {\"service\": \"kv\", \"operation\": \"get\", \"attempts\": 0, \"elapsed_ms\": 0, \"timeout_ms\": 9}, \"reason\": \"KV_LOCKED\"}\n{\"reason\": 1}\n";
    let out = run(&["decide"], input);
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[1].contains("\"line\":2"), "{}", lines[1]);
}

#[test]
fn help_lists_every_subcommand() {
    let out = run(&["--help"], "");
    let s = text(&out.stdout);
    for cmd in ["decide", "explain", "simulate"] {
        assert!(s.contains(cmd), "{s}");
    }
    let out = run(&["decide", "--help"], "");
    assert!(text(&out.stdout).contains("--timeout-ms"));
}

fn run_bytes(args: &[&str], stdin: &[u8], stderr: Stdio) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

const GOOD_LINE: &str = r#"{"request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500}, "reason": "KV_LOCKED"}"#;

#[test]
fn the_input_cannot_choose_the_error_code() {
    // Found on the old main: marker characters in an operation name became `unsupported_version`.
    let input = r#"{"request":{"service":"kv","operation":"\u0001unsupported_version\u0001pwned\u0001","attempts":0,"elapsed_ms":0,"timeout_ms":100},"reason":"KV_LOCKED"}"#;
    let out = run(&["decide"], input);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("retrypolicy: unknown_name: request.operation: "),
        "{err}"
    );
}

#[test]
fn an_unwritable_stderr_does_not_stop_the_batch() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        return; // no /dev/full on this system: nothing to check
    };
    let input = format!("{{bad\n{GOOD_LINE}\n{GOOD_LINE}\n");
    let out = run_bytes(&["decide"], input.as_bytes(), Stdio::from(full));
    assert_eq!(out.status.code(), Some(2), "a panic exits 101");
    let decided = text(&out.stdout)
        .lines()
        .filter(|l| l.contains("\"action\""))
        .count();
    assert_eq!(decided, 2);
}

#[test]
fn a_line_of_invalid_utf8_is_malformed_json_for_that_line_only() {
    let mut input = Vec::new();
    input.extend_from_slice(GOOD_LINE.as_bytes());
    input.extend_from_slice(b"\n{\"request\": \xff\xfe}\n");
    input.extend_from_slice(GOOD_LINE.as_bytes());
    let out = run_bytes(&["decide"], &input, Stdio::piped());
    assert_eq!(out.status.code(), Some(2));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["action"], "retry");
    assert_eq!(lines[1]["error"]["code"], "malformed_json");
    assert_eq!(lines[1]["error"]["line"], 2);
    assert_eq!(lines[2]["action"], "retry");
}

#[test]
fn mongodb_and_http_commands_answer_one_json_document() {
    let out = run(
        &["mongodb", "decide"],
        r#"{"request": {"operation": {"name": "insertOne"}}, "error": {"kind": "network"}}"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["action"].as_str(), v["retryable_as"].as_str()),
        (Some("retry"), Some("write"))
    );
    assert_eq!(v["labels"], serde_json::json!(["RetryableWriteError"]));

    let events = r#"{"events": [{"event": "begin"}, {"event": "callback_returned", "session": "in_progress"},
                     {"event": "commit_succeeded"}]}"#;
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["mongodb", "transaction"], events).stdout).unwrap();
    assert_eq!(
        v["actions"],
        serde_json::json!(["start_transaction", "commit", "return"])
    );

    let update = r#"{"op": "updateOne", "filter": {"_id": 1}, "update": {"$inc": {"n": 1}}}"#;
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["mongodb", "idempotency"], update).stdout).unwrap();
    assert_eq!(v["idempotent"], false);

    // 429 asking for 3 s with 2.5 s left: stop now, saying what the server asked for.
    let attempt = r#"{"loop": {"deadline_ms": 10000}, "state": {"attempts": 1, "elapsed_ms": 7500},
                      "attempt": {"kind": "response", "status": 429, "retry_after": "3"}}"#;
    let v: serde_json::Value = serde_json::from_slice(&run(&["http", "next"], attempt).stdout).unwrap();
    assert_eq!(
        (v["action"].as_str(), v["retry_after_ms"].as_u64()),
        (Some("stop"), Some(3000))
    );

    let v: serde_json::Value =
        serde_json::from_slice(&run(&["http", "classify"], r#"{"status": 503}"#).stdout).unwrap();
    assert_eq!(v["outcome"], "transient");
    let date = r#"{"value": "Sun, 06 Nov 1994 08:49:37 GMT", "now_unix_ms": 784111747000}"#;
    let v: serde_json::Value = serde_json::from_slice(&run(&["http", "retry-after"], date).stdout).unwrap();
    assert_eq!(v["delay_ms"], 30000);
}

#[test]
fn grpc_commands_answer_one_json_document() {
    let policy = r#"{"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s",
                     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#;
    let config = format!(
        r#"{{"service_config": {{"methodConfig": [{{"name": [{{"service": "helloworld.Greeter"}}],
             "retryPolicy": {policy}}}]}}, "service": "helloworld.Greeter", "method": "SayHello"}}"#
    );
    let v: serde_json::Value = serde_json::from_slice(&run(&["grpc", "config"], &config).stdout).unwrap();
    assert_eq!(
        (v["matched"].as_str(), v["policy"]["max_attempts"].as_u64()),
        (Some("service"), Some(4))
    );
    // gRFC A6 (since 2024-08-29): the first retry waits initialBackoff x random(0.8, 1.2):
    // 100 ms x (0.8 + 0.4 x 0.5) = 100 ms with a draw of 0.5.
    let attempt = format!(
        r#"{{"retry_policy": {policy}, "state": {{"attempts": 1}}, "attempt": {{"status": "UNAVAILABLE"}}, "random": 0.5}}"#
    );
    let v: serde_json::Value = serde_json::from_slice(&run(&["grpc", "retry"], &attempt).stdout).unwrap();
    assert_eq!(
        (v["action"].as_str(), v["delay_ms"].as_u64()),
        (Some("retry"), Some(100))
    );
    let hedge = r#"{"hedging_policy": {"maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE"]},
                    "events": [{"event": "start"}, {"event": "hedge_due"},
                               {"event": "attempt_ended", "attempt": {"status": "OK"}}]}"#;
    let v: serde_json::Value = serde_json::from_slice(&run(&["grpc", "hedge"], hedge).stdout).unwrap();
    assert_eq!(
        (v["sends"].clone(), v["end"].as_str()),
        (serde_json::json!([1, 1, 0]), Some("succeeded"))
    );
    let out = run(
        &["grpc", "retry"],
        &attempt.replace("\"maxAttempts\": 4", "\"maxAttempts\": 1"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("out_of_range: retry_policy.maxAttempts"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn aws_commands_answer_one_json_document() {
    // Standard mode: a 503 is transient; the first retry waits floor(r x min(1 s x 2^0, 20 s)).
    let v: serde_json::Value = serde_json::from_slice(
        &run(
            &["aws", "retry"],
            r#"{"attempts": 1, "error": {"status": 503}, "random": 0.5}"#,
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(
        (v["action"].as_str(), v["delay_ms"].as_u64()),
        (Some("retry"), Some(500))
    );
    // The 2026 behaviour: a 50 ms base, 14 tokens a retry, refunded by the success.
    let events = r#"{"config": {"behavior": "2026"}, "events": [{"error": {"status": 500}, "random": 0.5},
                    {"error": {"status": 500}, "random": 0.5}, {}]}"#;
    let v: serde_json::Value = serde_json::from_slice(&run(&["aws", "run"], events).stdout).unwrap();
    assert_eq!(v["delays_ms"], serde_json::json!([25, 50, null]));
    assert_eq!(v["quota_balances"], serde_json::json!([486, 472, 486]));
    // Adaptive mode: after a throttled response the bucket fills at the minimum 0.5 token/s.
    let limiter = r#"{"events": [{"at_ms": 0, "kind": "response", "throttled": true},
                     {"at_ms": 10, "kind": "acquire"}, {"at_ms": 20, "kind": "acquire"}]}"#;
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["aws", "rate-limiter"], limiter).stdout).unwrap();
    assert_eq!(v["acquired"], serde_json::json!([null, false, false]));
    assert_eq!(v["capacities"], serde_json::json!([0.0, 0.005, 0.01]));
    let out = run(&["aws", "retry"], r#"{"attempts": 0, "error": {"status": 503}}"#);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("attempts"), "{}", text(&out.stderr));
}

#[test]
fn mongodb_and_http_bad_input_exits_2_naming_the_field() {
    let out = run(
        &["http", "next"],
        r#"{"loop": {}, "state": {"attempts": 1, "elapsed_ms": -1}, "attempt": {"kind": "network_error"}}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("invalid_duration: state.elapsed_ms"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["mongodb", "decide"], "{not json");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("malformed_json"),
        "{}",
        text(&out.stderr)
    );
    let help = run(&["mongodb", "--help"], "");
    for sub in ["decide", "transaction", "idempotency", "rewrite"] {
        assert!(text(&help.stdout).contains(sub), "{sub}");
    }
}

#[test]
fn storm_compare_prints_each_budget_kind_with_its_amplification() {
    let storm = std::fs::read_to_string(scenarios().join("../storms/kv-get-all-failing.json")).unwrap();
    let out = run(&["storm", "--compare", "--json"], &storm);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let reports: Vec<serde_json::Value> = serde_json::from_str(&text(&out.stdout)).unwrap();
    let sent: Vec<(&str, u64)> = reports
        .iter()
        .map(|r| {
            (
                r["budget_kind"].as_str().unwrap_or("none"),
                r["attempts_sent"].as_u64().unwrap(),
            )
        })
        .collect();
    // Worked out by hand: 13 sends per KV get in 2.5 s without a budget (1, 2, 4 ... 500 ms
    // backoff, 10 ms latency); gRPC's bucket of 10 retries 4 failures (tokens 10 to 6); the AWS
    // quota of 500 pays for 100 retries at 5 each.
    assert_eq!(
        &sent[..3],
        &[("none", 13_000), ("token_bucket", 1_004), ("retry_quota", 1_100)]
    );
    assert_eq!(sent[3].0, "percentage");
    assert!(reports.iter().all(|r| r["requests"] == 1000));
    let table = run(&["storm", "--compare"], &storm);
    let table = text(&table.stdout);
    assert!(table.contains("13.00x") && table.contains("1.10x"), "{table}");
}

#[test]
fn storm_bad_input_exits_2_naming_the_field() {
    let out = run(
        &["storm"],
        r#"{"request": {"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 2500},
            "reason": "KV_LOCKED", "requests_per_second": 0, "duration_ms": 1000, "latency_ms": 1}"#,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("requests_per_second"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn run_prints_each_event_and_step_and_how_the_run_ended() {
    let runs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/runs");
    let out = bin()
        .args(["run", "--input"])
        .arg(runs.join("http-503-503-200.json"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let waits: Vec<&str> = table.lines().skip(1).filter(|l| l.contains(" wait ")).collect();
    assert_eq!(waits.len(), 2, "{table}");
    assert!(
        waits[0].contains("100") && waits[0].contains("service_unavailable"),
        "{table}"
    );
    assert!(
        waits[1].contains("1000") && waits[1].contains("retry_after"),
        "{table}"
    );
    assert!(table.ends_with("3 attempts sent; ended: succeeded\n"), "{table}");
    let json = run(
        &["run", "--json"],
        &std::fs::read_to_string(runs.join("kv-breaker-open.json")).unwrap(),
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["rules"][2], "breaker_wait");
    assert_eq!(v["delays_ms"], serde_json::json!([1, 100]));
    let bad = run(
        &["run"],
        r#"{"run": {"rules": {"http": {}}, "max_attempts": 2}, "events": [{"event": "start", "at_ms": 0}, {"event": "attempt_ended", "at_ms": 1, "outcome": {"kind": "http", "status": 999}}]}"#,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("events[1].outcome.status"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn errors_say_how_to_correct_the_input() {
    // An unknown reason: the near match and every accepted name.
    let out = run(
        &[
            "decide",
            "--operation",
            "get",
            "--timeout-ms",
            "2500",
            "--reason",
            "KV_LOKED",
        ],
        "",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("did you mean KV_LOCKED?"), "{err}");
    assert!(err.contains("accepted: UNKNOWN, SOCKET_NOT_AVAILABLE"), "{err}");
    // An unknown name: its near match (the accepted names are in the message already).
    let err = text(
        &run(
            &[
                "decide",
                "--operation",
                "gett",
                "--timeout-ms",
                "2500",
                "--reason",
                "KV_LOCKED",
            ],
            "",
        )
        .stderr,
    );
    assert!(
        err.contains("did you mean get?") && err.contains("expected one of get,"),
        "{err}"
    );
    // Flag mode names the flag, not the JSON path.
    let err = text(
        &run(
            &[
                "decide",
                "--operation",
                "get",
                "--timeout-ms",
                "abc",
                "--reason",
                "KV_LOCKED",
            ],
            "",
        )
        .stderr,
    );
    assert!(
        err.contains("invalid_duration: --timeout-ms:") && !err.contains("request."),
        "{err}"
    );
    // A number out of range says the range, not a Rust type; the user's field is named.
    let err = text(&run(&["http", "classify"], r#"{"status": 70000}"#).stderr);
    assert!(
        err.contains("status: 70000 is out of range: expected a whole number from 0 to 65535"),
        "{err}"
    );
    assert!(!err.contains("u16"), "{err}");
    let err = text(&run(&["http", "classify"], r#"{"status": 999}"#).stderr);
    assert!(
        err.contains("out_of_range: status: 999") && !err.contains("http_status"),
        "{err}"
    );
    // A malformed document is reported once, on stderr.
    let out = run(&["decide"], r#"{"request": "#);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));
}

#[test]
fn defaults_are_the_apis_and_the_cli_reads_the_clock_a_date_needs() {
    // JSON mode: attempts and elapsed_ms default to 0, as in flag mode and every API.
    let out = run(
        &["decide"],
        r#"{"request": {"service": "kv", "operation": "get", "timeout_ms": 2500}, "reason": "KV_LOCKED"}"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["action"].as_str(), v["attempts"].as_u64()),
        (Some("retry"), Some(0))
    );
    // A Retry-After date without now_unix_ms: the CLI is a host and reads its clock (a date in
    // 1994 is in the past: wait 0; one in 2200 is in the future: wait more than a century of ms).
    let past = run(
        &["http", "retry-after"],
        r#"{"value": "Sun, 06 Nov 1994 08:49:37 GMT"}"#,
    );
    assert!(past.status.success(), "{}", text(&past.stderr));
    assert_eq!(text(&past.stdout).trim(), r#"{"delay_ms":0}"#);
    let future = run(
        &["http", "retry-after"],
        r#"{"value": "Wed, 01 Jan 2200 00:00:00 GMT"}"#,
    );
    let v: serde_json::Value = serde_json::from_slice(&future.stdout).unwrap();
    assert!(v["delay_ms"].as_u64().unwrap() > 100 * 365 * 86_400_000, "{v}");
}

/// The demo's story: every scene's `$` command, run from the repository's root, gives the answer
/// `demo --json` reports for it (the table commands with `--json`; `explain` prints the story's
/// sentence), and each domain term is explained once, before the command that first needs it.
#[test]
fn demo_scenes_reproduce_with_their_commands_and_explain_each_term_once() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let story = run(&["demo"], "");
    assert!(story.status.success(), "{}", text(&story.stderr));
    let story = text(&story.stdout);
    let lines = run(&["demo", "--json"], "");
    assert!(lines.status.success(), "{}", text(&lines.stderr));
    let scenes: Vec<serde_json::Value> = text(&lines.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(scenes.len(), 18);
    for (n, scene) in scenes.iter().enumerate() {
        assert_eq!(scene["scene"], n + 1);
        let title = scene["title"].as_str().unwrap();
        assert!(
            story.contains(&format!("\n{}. {title}\n", n + 1)),
            "scene {title} missing"
        );
        let command = scene["command"].as_str().unwrap();
        assert!(
            story.contains(&format!("   $ {command}\n")),
            "{command} not shown"
        );
        let mut args: Vec<&str> = command.split(' ').skip(1).collect();
        let table = matches!(args[0], "simulate" | "storm" | "run");
        if table {
            args.push("--json");
        }
        let out = bin().args(&args).current_dir(&root).output().unwrap();
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
        let printed = text(&out.stdout);
        if args[0] == "explain" {
            assert!(story.contains(&format!("  {printed}")), "{command}: {printed}");
            continue;
        }
        let answer: serde_json::Value = serde_json::from_str(&printed).unwrap();
        // `storm --compare --json` prints the reports; the demo's answer is the same list.
        assert_eq!(answer, scene["answer"], "{command}");
    }
    for term in [
        "RFC 0049",
        "idempotent",
        "KV_NOT_MY_VBUCKET",
        "Retry-After",
        "circuit breaker",
        "retry budget",
    ] {
        let defined = format!("   - {term}: ");
        assert_eq!(story.matches(&defined).count(), 1, "{term} explained once");
    }
    // Explained before the first table that shows it (KV_NOT_MY_VBUCKET first appears in scene 4).
    let first_use = story.find("KV_NOT_MY_VBUCKET    ").unwrap();
    assert!(story.find("   - KV_NOT_MY_VBUCKET: ").unwrap() < first_use);
}

/// Input past 64 MiB is refused with a typed message before it is held whole (SECURITY.md), on
/// stdin and from a file; 64 MiB itself is read.
#[test]
fn input_over_64_mib_is_refused() {
    let big = " ".repeat((64 << 20) + 1);
    let out = run(&["decide"], &big);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("input_too_large: input is over 64 MiB"),
        "{}",
        text(&out.stderr)
    );
    let dir = std::env::temp_dir().join(format!("retrypolicy-cli-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.json");
    std::fs::write(&file, format!("{RFC_EXAMPLE}{}", " ".repeat(64 << 20))).unwrap();
    let out = run(&["simulate", file.to_str().unwrap()], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("is over 64 MiB"),
        "{}",
        text(&out.stderr)
    );
    // Exactly 64 MiB is within the bound: the document is read and decided.
    std::fs::write(
        &file,
        format!("{RFC_EXAMPLE}{}", " ".repeat((64 << 20) - RFC_EXAMPLE.len())),
    )
    .unwrap();
    let out = run(&["decide", "--input", file.to_str().unwrap()], "");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}
