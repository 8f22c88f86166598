//! The Rust fixture runner: reads every fixture file, calls the public API, compares.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The folder of the committed corpus.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec-fixtures/cases")
}

/// Every `.json` file under `dir`, recursively, sorted.
pub fn fixture_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Calls the core's JSON API; `None` when the function is unknown.
pub fn call(function: &str, input: &Value) -> Option<Result<Value, retrypolicy::Error>> {
    if !retrypolicy_wire::api::FUNCTIONS.contains(&function) {
        return None;
    }
    Some(retrypolicy_wire::api::call(function, input))
}

/// JSON equality where numbers compare by value (2 == 2.0).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || (x.as_f64().is_some() && x.as_f64() == y.as_f64() && !(x.is_u64() && y.is_u64()))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// The result of running one case: `Ok(())` or a one-line explanation.
pub fn check_case(function: &str, case: &Value) -> Result<(), String> {
    let input = case.get("input").ok_or("case has no input")?;
    let outcome = call(function, input).ok_or_else(|| format!("unknown function {function:?}"))?;
    match (outcome, case.get("expect"), case.get("expect_error")) {
        (Ok(out), Some(Value::Object(expect)), None) => {
            for (k, want) in expect {
                let got = out.get(k).unwrap_or(&Value::Null);
                if !json_eq(got, want) {
                    return Err(format!("{k}: expected {want}, got {got} (whole output {out})"));
                }
            }
            Ok(())
        }
        (Ok(out), _, Some(code)) => Err(format!("expected error {code}, got output {out}")),
        (Err(e), _, Some(Value::String(code))) => {
            if e.code() != code {
                return Err(format!("expected error {code}, got {} ({e})", e.code()));
            }
            if let Some(Value::String(field)) = case.get("error_field") {
                if !e.to_string().contains(field.as_str()) {
                    return Err(format!("error message does not name {field:?}: {e}"));
                }
            }
            Ok(())
        }
        (Err(e), _, _) => Err(format!("unexpected error {}: {e}", e.code())),
        _ => Err("case needs an expect object or an expect_error string".into()),
    }
}

/// Counts from a run.
#[derive(Debug, Default)]
pub struct Tally {
    /// Cases that matched.
    pub passed: usize,
    /// Cases (or files) that did not.
    pub failed: usize,
    /// One line per failure.
    pub failures: Vec<String>,
}

/// Runs every case of every file under `dir`.
pub fn run_dir(dir: &Path, tally: &mut Tally) {
    for file in fixture_files(dir) {
        let name = file.display().to_string();
        let doc: Value = match std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(d) => d,
            Err(e) => {
                tally.failed += 1;
                tally.failures.push(format!("{name}: unreadable: {e}"));
                continue;
            }
        };
        let function = doc["function"].as_str().unwrap_or_default().to_owned();
        let Some(cases) = doc["cases"].as_array() else {
            tally.failed += 1;
            tally.failures.push(format!("{name}: no cases array"));
            continue;
        };
        for case in cases {
            let id = case["id"].as_str().unwrap_or("<no id>");
            match check_case(&function, case) {
                Ok(()) => tally.passed += 1,
                Err(why) => {
                    tally.failed += 1;
                    tally.failures.push(format!("{name}: {id}: {why}"));
                }
            }
        }
    }
}
