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

/// The feature a case needs that this build leaves out (`api::FEATURED`'s for its function, or
/// what its input names: a budget or breaker, `http`, `mongodb`, `grpc` or `aws` rules, a `kv`,
/// `mongodb`, `grpc` or `aws` outcome), if any. Every build but the default one has some (`make test-features`).
pub fn unbuilt_need(function: &str, input: &Value) -> Option<&'static str> {
    if let Some(feature) = retrypolicy_wire::api::unbuilt_feature(function) {
        return Some(feature);
    }
    let unbuilt = |name: &'static str| {
        let built = retrypolicy::features::feature(name).is_some_and(|f| f.built);
        (!built).then_some(name)
    };
    let mut need = None;
    let mut stack = vec![input.clone()];
    while let Some(v) = stack.pop() {
        match v {
            // A document given as JSON text (`parse_policy`'s `json`) is read for what it names too.
            Value::String(text) if text.trim_start().starts_with('{') => {
                stack.extend(serde_json::from_str::<Value>(&text).ok());
            }
            Value::Object(o) => {
                for (k, x) in o {
                    let named = match (k.as_str(), &x) {
                        (_, Value::Null) => None,
                        ("budget" | "budget_state" | "breaker" | "breaker_state" | "budget_verdict", _) => {
                            unbuilt("guards")
                        }
                        ("rules", Value::Object(r)) if r.contains_key("http") => unbuilt("http"),
                        ("rules", Value::Object(r)) if r.contains_key("mongodb") => unbuilt("mongodb"),
                        ("rules", Value::Object(r)) if r.contains_key("grpc") => unbuilt("grpc"),
                        ("rules", Value::Object(r)) if r.contains_key("aws") => unbuilt("aws"),
                        ("kind", Value::String(kind)) if kind == "kv" => unbuilt("couchbase"),
                        ("kind", Value::String(kind)) if kind == "mongodb" => unbuilt("mongodb"),
                        ("kind", Value::String(kind)) if kind == "grpc" => unbuilt("grpc"),
                        ("kind", Value::String(kind)) if kind == "aws" => unbuilt("aws"),
                        _ => None,
                    };
                    need = need.or(named);
                    stack.push(x);
                }
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    need
}

/// A case that needs a feature this build leaves out: a function of it answers the core's
/// not-built error naming the function and the feature; any other call is refused with a typed error.
fn check_unbuilt(
    function: &str,
    feature: &str,
    outcome: Result<Value, retrypolicy::Error>,
) -> Result<(), String> {
    match outcome {
        Ok(out) => Err(format!(
            "needs the {feature:?} feature, which this build leaves out, yet answered {out}"
        )),
        Err(_) if retrypolicy_wire::api::is_built(function) => Ok(()),
        Err(e) => {
            let named = e.to_string().contains(&format!("{function:?}"))
                && e.to_string().contains(&format!("{feature:?}"));
            if (e.code(), e.field()) == ("unknown_name", "function") && named {
                Ok(())
            } else {
                Err(format!(
                    "a function of {feature:?}, not built, answered {} ({e})",
                    e.code()
                ))
            }
        }
    }
}

/// The result of running one case: `Ok(())` or a one-line explanation.
pub fn check_case(function: &str, case: &Value) -> Result<(), String> {
    let input = case.get("input").ok_or("case has no input")?;
    let outcome = call(function, input).ok_or_else(|| format!("unknown function {function:?}"))?;
    if let Some(feature) = unbuilt_need(function, input) {
        return check_unbuilt(function, feature, outcome);
    }
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
    /// Of those, cases that need a feature this build leaves out (refused as they must be).
    pub unbuilt: usize,
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
                Ok(()) => {
                    tally.passed += 1;
                    let needs = case.get("input").and_then(|i| unbuilt_need(&function, i));
                    tally.unbuilt += usize::from(needs.is_some());
                }
                Err(why) => {
                    tally.failed += 1;
                    tally.failures.push(format!("{name}: {id}: {why}"));
                }
            }
        }
    }
}
