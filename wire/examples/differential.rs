//! Writes a seeded set of generated spec-fixture cases for the cross-runtime differential test.
//!
//! `cargo run -p retrypolicy-wire --example differential -- <out-dir> <n> [seed]` mutates the
//! committed cases of the functions below (numbers, names, missing and unknown keys, wrong types),
//! asks the core's JSON API for each answer (the whole output, or the error code and field), and
//! writes them in the fixture format to `<out-dir>/differential_<function>.json`. Every binding's
//! fixture runner then reads that folder (`SPEC_FIXTURES_DIR`) through its own public API, so a
//! binding that converts or reports anything differently from the core fails there.

use std::collections::BTreeMap;
use std::path::Path;

use retrypolicy_wire::api::{call, FUNCTIONS};
use serde_json::{json, Map, Value};

/// Whether a function is compared across runtimes (issue 15: decide, the classifiers, http_next
/// and mongodb_decide; issue 24: run, the retry run machine; issue 31: budgets, breakers, storms).
fn compared(function: &&str) -> bool {
    function.starts_with("classify_")
        || [
            "decide",
            "http_next",
            "mongodb_decide",
            "run",
            "budget_run",
            "breaker_run",
            "simulate_storm",
        ]
        .contains(function)
}

/// The keys of a function's answer every runtime builds from its own typed values; `None`: the
/// whole answer.
fn compared_keys(function: &str) -> Option<&'static [&'static str]> {
    match function {
        "run" => Some(&[
            "actions",
            "delays_ms",
            "rules",
            "end",
            "attempts_sent",
            "budget_state",
            "breaker_state",
        ]),
        "budget_run" => Some(&["permitted", "balances", "state"]),
        "breaker_run" => Some(&["permitted", "states", "state"]),
        _ => None,
    }
}

/// Storms larger than this many requests are left out (the reference answer is computed in a debug
/// build, and the corpus's own storms are 1,000 requests).
const MAX_COMPARED_STORM_REQUESTS: u64 = 5_000;

/// The answer a runtime must give: the whole answer, or the keys of [`compared_keys`] (for `run`
/// its summaries: every step's action, wait and rule, the end, the attempts sent, the budget's and
/// breaker's state), which each runtime builds from its own typed values.
fn expected(function: &str, answer: Value) -> Value {
    match (compared_keys(function), answer) {
        (Some(keys), Value::Object(m)) => Value::Object(
            m.into_iter()
                .filter(|(k, _)| keys.contains(&k.as_str()))
                .collect(),
        ),
        (_, answer) => answer,
    }
}

/// SplitMix64: a small seeded generator, so a seed names the same cases on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every value seen under each key in the committed cases: the pool a mutation draws names from.
type Pools = BTreeMap<String, Vec<Value>>;

fn collect(value: &Value, pools: &mut Pools) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let pool = pools.entry(k.clone()).or_default();
                if !pool.contains(v) {
                    pool.push(v.clone());
                }
                collect(v, pools);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, pools)),
        _ => {}
    }
}

/// A number a field might be given: edges, small and large whole numbers, fractions, negatives.
fn number(rng: &mut Rng) -> Value {
    match rng.below(10) {
        0 => json!(0),
        1 => json!(rng.below(5)),
        2 => json!(rng.below(3_000)),
        3 => json!(rng.below(100_000)),
        4 => json!(9_007_199_254_740_991_u64),
        5 => json!(-1),
        6 => json!((rng.next() >> 11) as f64 / (1u64 << 53) as f64),
        7 => json!(1.5),
        8 => json!("18446744073709551615"),
        // Past 2^53 − 1 as a decimal string, as the fixture format writes such integers.
        _ => json!((rng.next() >> 1).to_string()),
    }
}

/// A value of some other JSON type than a field expects.
fn wrong_type(rng: &mut Rng) -> Value {
    rng.pick(&[
        json!(null),
        json!(true),
        json!([]),
        json!({}),
        json!("x"),
        json!(-7),
    ])
    .clone()
}

/// One change somewhere in `value` that keeps its shape: a name or a value seen under the same
/// key in the corpus, or a nearby whole number; the result is often valid.
fn vary(value: &mut Value, key: &str, pools: &Pools, rng: &mut Rng) {
    let pool = pools.get(key).filter(|p| p.len() > 1);
    match value {
        Value::Object(map) if !map.is_empty() && (pool.is_none() || rng.below(3) != 0) => {
            let k = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            if let Some(v) = map.get_mut(&k) {
                vary(v, &k, pools, rng);
            }
        }
        Value::Number(n) if n.is_u64() && rng.below(2) == 0 => {
            let v = n.as_u64().unwrap_or_default();
            *value = json!(rng.next() % v.saturating_mul(2).saturating_add(100).min(1 << 53));
        }
        _ => {
            if let Some(pool) = pool {
                *value = rng.pick(pool).clone();
            }
        }
    }
}

/// One change somewhere in `value` that likely breaks it: a missing key, an unknown key, a key
/// from elsewhere, an edge number or a value of the wrong type.
fn break_one(value: &mut Value, pools: &Pools, rng: &mut Rng) {
    if let Value::Object(map) = value {
        if !map.is_empty() && rng.below(3) != 0 {
            let k = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            if let Some(v) = map.get_mut(&k) {
                return break_one(v, pools, rng);
            }
        }
        match rng.below(3) {
            0 if !map.is_empty() => {
                let k = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
                map.remove(&k);
            }
            1 => {
                map.insert("unexpected_key".to_owned(), json!(1));
            }
            _ => {
                let k = pools
                    .keys()
                    .nth(rng.below(pools.len()))
                    .cloned()
                    .unwrap_or_default();
                map.insert(k.clone(), rng.pick(&pools[&k]).clone());
            }
        }
        return;
    }
    *value = if rng.below(2) == 0 {
        number(rng)
    } else {
        wrong_type(rng)
    };
}

/// A number given as a reason is a `RetryReason` value in Python (`IntEnum`) and C (`enum`), not
/// a wrong type, so no case puts one there.
fn number_as_reason(input: &Value) -> bool {
    input.get("reason").is_some_and(Value::is_number)
}

/// The fixture case for `input`: the core's whole answer, or its error code and field.
fn case(function: &str, index: usize, input: Value) -> Value {
    let mut case = Map::new();
    case.insert(
        "id".into(),
        json!(format!("differential-{function}-{index}").replace('_', "-")),
    );
    case.insert(
        "description".into(),
        json!("generated: a mutation of a committed case"),
    );
    case.insert(
        "source".into(),
        json!("issue 15, cross-runtime differential test"),
    );
    case.insert("input".into(), input.clone());
    match call(function, &input) {
        Ok(answer) => {
            case.insert("expect".into(), expected(function, answer));
        }
        Err(e) => {
            case.insert("expect_error".into(), json!(e.code()));
            // The field's last name: each language names the field its own API took (a path
            // within the argument, camelCase in JavaScript), and every message contains that name.
            let name = e.field().rsplit('.').next().unwrap_or_default();
            if !name.is_empty() {
                case.insert("error_field".into(), json!(name));
            }
        }
    }
    Value::Object(case)
}

fn read_cases(dir: &Path) -> Result<BTreeMap<String, Vec<Value>>, Box<dyn std::error::Error>> {
    let mut by_function: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir)? {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(entry?.path())?)?;
        let function = doc["function"].as_str().unwrap_or_default().to_owned();
        // Valid cases only: a mutation then puts every fault of an input in one argument.
        let cases = doc["cases"].as_array().into_iter().flatten();
        let inputs = cases
            .filter(|c| c.get("expect").is_some())
            .map(|c| c["input"].clone());
        by_function.entry(function).or_default().extend(inputs);
    }
    Ok(by_function)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, n, seed) = match args.as_slice() {
        [out, n] => (out, n.parse::<usize>()?, 1),
        [out, n, seed] => (out, n.parse::<usize>()?, seed.parse::<u64>()?),
        _ => return Err("usage: differential <out-dir> <n> [seed]".into()),
    };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec-fixtures/cases");
    let by_function = read_cases(&corpus)?;
    // The names and values seen in each function's own cases: a MongoDB request never lands
    // where a Couchbase one belongs, which would put several faults in one change.
    let pools: BTreeMap<&str, Pools> = by_function
        .iter()
        .map(|(function, inputs)| {
            let mut pools = Pools::new();
            inputs.iter().for_each(|input| collect(input, &mut pools));
            (function.as_str(), pools)
        })
        .collect();
    let mut rng = Rng(seed);
    let mut generated: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    let functions: Vec<&str> = FUNCTIONS.iter().copied().filter(compared).collect();
    for index in 0..n {
        let function = functions[index % functions.len()];
        let mut input = rng.pick(&by_function[function]).clone();
        // One change per case, in one argument: an input then has at most one fault, since which
        // of two faults a language reports first is its own reading order, not a difference.
        let keys: Vec<String> = input
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let key = rng.pick(&keys).clone();
        let pools = &pools[function];
        if let Some(argument) = input.get_mut(&key) {
            if rng.below(3) == 0 {
                break_one(argument, pools, &mut rng);
            } else {
                vary(argument, &key, pools, &mut rng);
            }
        }
        if number_as_reason(&input) {
            input["reason"] = json!("KV_LOCKED");
        }
        if function == "simulate_storm" {
            let requests = input["requests_per_second"]
                .as_u64()
                .unwrap_or(0)
                .saturating_mul(input["duration_ms"].as_u64().unwrap_or(0))
                / 1000;
            if requests > MAX_COMPARED_STORM_REQUESTS && call(function, &input).is_ok() {
                continue;
            }
        }
        generated
            .entry(function)
            .or_default()
            .push(case(function, index, input));
    }
    std::fs::create_dir_all(out)?;
    for (function, cases) in generated {
        let doc = json!({"schemaVersion": 1, "function": function, "source": "generated", "cases": cases});
        std::fs::write(
            Path::new(out).join(format!("differential_{function}.json")),
            serde_json::to_string(&doc)?,
        )?;
    }
    println!("{n} cases (seed {seed}) in {out}");
    Ok(())
}
