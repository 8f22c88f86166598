//! `call_text` answers as `call` does: every `budget_run` fixture (valid and invalid, the ones a
//! streaming read accepts and the ones it hands to the typed reader for the error) and a summary.

use retrypolicy_wire::api::{call, call_text};
use serde_json::{json, Value};

#[test]
fn call_text_gives_calls_answer_for_every_budget_run_fixture() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../spec-fixtures/cases");
    let mut compared = 0;
    for entry in std::fs::read_dir(path).unwrap() {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
        if doc["function"] != "budget_run" {
            continue;
        }
        for case in doc["cases"].as_array().unwrap() {
            let input = &case["input"];
            let by_value = call("budget_run", input);
            let by_text = call_text("budget_run", &input.to_string());
            match (by_value, by_text) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", case["id"]),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", case["id"]),
                (a, b) => panic!("{}: call {a:?}, call_text {b:?}", case["id"]),
            }
            compared += 1;
        }
    }
    assert!(compared >= 30, "only {compared} budget_run cases found");
}

#[test]
fn a_summary_counts_the_retries_and_keeps_no_verdict_per_event() {
    let events: Vec<Value> = (0..1000)
        .map(|i| match i % 4 {
            0 => json!({"at_ms": i, "kind": "request"}),
            1 => json!({"at_ms": i, "kind": "failure"}),
            2 => json!({"at_ms": i, "kind": "retry"}),
            _ => json!({"at_ms": i, "kind": "success", "after_retry": "error"}),
        })
        .collect();
    let input = json!({"budget": {"kind": "token_bucket", "max_tokens": 10, "token_ratio": 0.1}, "events": events, "summary": true});
    let full = call(
        "budget_run",
        &json!({"budget": input["budget"], "events": input["events"]}),
    )
    .unwrap();
    let summary = call_text("budget_run", &input.to_string()).unwrap();
    let permitted = full["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .zip(input["events"].as_array().unwrap())
        .filter(|(v, e)| e["kind"] == "retry" && v["permitted"] == true)
        .count();
    assert_eq!(summary["summary"]["retries_asked"], 250);
    assert_eq!(summary["summary"]["retries_permitted"], permitted);
    assert_eq!(summary["summary"]["retries_refused"], 250 - permitted);
    assert_eq!(summary["state"], full["state"]);
    assert_eq!(summary["summary"]["last"], full["verdicts"][999]);
    assert!(summary.get("verdicts").is_none());
}
