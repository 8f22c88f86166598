//! The corpus itself: valid against its schema, ids unique, and the runner catches a wrong case.

mod common;

use std::collections::HashSet;

use serde_json::{json, Value};

fn load(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_fixture_file_validates_against_the_schema() {
    let schema = load(&common::corpus_dir().join("../schema.json"));
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let files = common::fixture_files(&common::corpus_dir());
    assert!(files.len() >= 10, "corpus went missing: {files:?}");
    for file in files {
        let doc = load(&file);
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", file.display());
    }
}

#[test]
fn schema_rejects_a_case_without_source_or_with_both_outcomes() {
    let schema = load(&common::corpus_dir().join("../schema.json"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let base =
        |case: Value| json!({"schemaVersion": 1, "function": "decide", "source": "s", "cases": [case]});
    let no_source = json!({"id": "a", "description": "d", "input": {"request": {}, "reason": "UNKNOWN"}, "expect": {"action": "retry"}});
    assert!(!validator.is_valid(&base(no_source)));
    let both = json!({"id": "a", "description": "d", "source": "s", "input": {"request": {}, "reason": "UNKNOWN"},
                      "expect": {"action": "retry"}, "expect_error": "unknown_reason"});
    assert!(!validator.is_valid(&base(both)));
}

#[test]
fn case_ids_are_unique_across_the_corpus() {
    let mut seen = HashSet::new();
    for file in common::fixture_files(&common::corpus_dir()) {
        for case in load(&file)["cases"].as_array().unwrap() {
            let id = case["id"].as_str().unwrap().to_owned();
            assert!(seen.insert(id.clone()), "duplicate id {id} in {}", file.display());
        }
    }
}

#[test]
fn a_wrong_expectation_in_an_extra_folder_fails_the_run() {
    let dir = std::env::temp_dir().join(format!("rp-wrong-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let doc = json!({"schemaVersion": 1, "function": "controlled_backoff", "source": "test", "cases": [
        {"id": "right", "description": "d", "source": "s", "input": {"attempt": 0}, "expect": {"delay_ms": 1}},
        {"id": "wrong", "description": "d", "source": "s", "input": {"attempt": 0}, "expect": {"delay_ms": 2}},
        {"id": "wrong-error", "description": "d", "source": "s", "input": {"attempt": -1}, "expect_error": "invalid_duration"}
    ]});
    std::fs::write(dir.join("wrong.json"), doc.to_string()).unwrap();
    let mut tally = common::Tally::default();
    common::run_dir(&dir, &mut tally);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!((tally.passed, tally.failed), (1, 2), "{:?}", tally.failures);
}

#[test]
fn every_reason_and_kv_operation_has_a_fixture() {
    let mut text = String::new();
    for file in common::fixture_files(&common::corpus_dir()) {
        text.push_str(&std::fs::read_to_string(file).unwrap());
    }
    for r in retrypolicy::RetryReason::ALL {
        assert!(
            text.contains(&format!("\"reason\": \"{}\"", r.name())),
            "no fixture for {r}"
        );
    }
    for row in retrypolicy::operation::KV_CATALOG {
        assert!(
            text.contains(&format!("\"operation\": \"{}\"", row.name)),
            "no fixture for {}",
            row.name
        );
    }
}
