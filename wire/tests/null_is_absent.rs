//! The fixture contract's "an optional key given `null` reads as not given", checked over the whole
//! corpus: in every valid case, each object key whose removal still leaves a valid input is set to
//! `null` instead, and the answer must be the one without the key. In the full build only: a
//! reduced build refuses the keys of the features it leaves out (`budget_verdict`), `null` or not.
#![cfg(all(feature = "guards", feature = "couchbase", feature = "mongodb"))]

mod common;

use serde_json::Value;

/// Keys whose values are another system's documents, where `null` is a value like any other (a
/// MongoDB filter's `{"_id": null}`) and the contract's words do not reach: MongoDB's filters,
/// updates, documents, duplicate-key values and pending tokens.
const FOREIGN_DOCUMENTS: &[&str] = &[
    "filter",
    "update",
    "documents",
    "key_value",
    "key_pattern",
    "token",
];

/// Whether the key at `pointer` is one of the JSON API's own (not inside a [`FOREIGN_DOCUMENTS`]
/// value, nor a Couchbase error map's entry, keyed by its status code).
fn ours(pointer: &str) -> bool {
    let parents: Vec<&str> = pointer.split('/').skip(1).collect();
    let parents = &parents[..parents.len() - 1];
    !parents.iter().any(|p| FOREIGN_DOCUMENTS.contains(p)) && !parents.ends_with(&["error_map", "errors"])
}

/// Every object key's JSON pointer in `value`, parents before children.
fn key_pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                key_pointers(v, &p, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                key_pointers(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// `input` with the key at `pointer` removed, or set to `null`.
fn edited(input: &Value, pointer: &str, null: bool) -> Value {
    let mut out = input.clone();
    let (parent, key) = pointer.rsplit_once('/').unwrap_or_default();
    let key = key.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = out.pointer_mut(parent) {
        if null {
            map.insert(key, Value::Null);
        } else {
            map.remove(&key);
        }
    }
    out
}

#[test]
fn an_optional_key_given_null_reads_as_not_given() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in common::fixture_files(&common::corpus_dir()) {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let function = doc["function"].as_str().unwrap_or_default();
        let cases = doc["cases"].as_array().into_iter().flatten();
        for case in cases.filter(|c| c.get("expect").is_some()) {
            let input = &case["input"];
            let mut pointers = Vec::new();
            key_pointers(input, "", &mut pointers);
            for pointer in pointers
                .iter()
                .filter(|p| ours(p) && input.pointer(p) != Some(&Value::Null))
            {
                let Some(Ok(without)) = common::call(function, &edited(input, pointer, false)) else {
                    continue;
                };
                checked += 1;
                let with_null = common::call(function, &edited(input, pointer, true));
                if with_null.as_ref().and_then(|r| r.as_ref().ok()) != Some(&without) {
                    let got = match with_null {
                        Some(Err(e)) => format!("{} {}", e.code(), e.field()),
                        _ => "another answer".to_owned(),
                    };
                    failures.push(format!("{function} {} {pointer}: {got}", case["id"]));
                }
            }
        }
    }
    assert!(
        checked > 2000,
        "only {checked} optional keys found: is the corpus there?"
    );
    assert!(
        failures.is_empty(),
        "{} keys refuse null:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
