//! Writes a seeded set of generated spec-fixture cases for the cross-runtime differential test.
//!
//! `cargo run -p retrypolicy-wire --example differential -- <out-dir> <n> [seed]` mutates the
//! committed cases of the functions below (numbers, names, list items, missing and unknown keys,
//! wrong types), asks the core's JSON API for each answer (the whole output, or the error code and
//! field), and writes them in the fixture format to `<out-dir>/differential_<group>.json` (a
//! group is a function, or `run_grpc_aws`: the runs with gRPC or AWS rules). Every binding's
//! fixture runner then reads that folder (`SPEC_FIXTURES_DIR`) through its own public API, so a
//! binding that converts or reports anything differently from the core fails there.

use std::collections::BTreeMap;
use std::path::Path;

use retrypolicy_wire::api::{call, FUNCTIONS};
use serde_json::{json, Map, Value};

/// Whether a function is compared across runtimes (issue 15: decide, the classifiers, http_next
/// and mongodb_decide; issue 24: run, the retry run machine; issue 31: budgets, breakers, storms;
/// issue 28: gRPC's service config, retry and hedging, the AWS retry modes and rate limiter).
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
        // grpc_service_config, grpc_retry, grpc_hedge, aws_retry, aws_retry_run, aws_rate_limiter_run
        || function.starts_with("grpc_")
        || function.starts_with("aws_")
}

/// The group of a committed case: its function, except that a run with gRPC or AWS rules is
/// `run_grpc_aws`, mutated from its own cases and pools (a gRPC status never lands in a
/// Couchbase run, and such runs are not a handful among the other runs' cases).
fn group(function: &str, input: &Value) -> String {
    let rules = &input["run"]["rules"];
    if function == "run" && (rules.get("grpc").is_some() || rules.get("aws").is_some()) {
        "run_grpc_aws".to_owned()
    } else {
        function.to_owned()
    }
}

/// The function a group's cases call.
fn function_of(group: &str) -> &str {
    if group == "run_grpc_aws" {
        "run"
    } else {
        group
    }
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
            "stats",
            "breaker_changes",
            "signals",
        ]),
        "budget_run" => Some(&["permitted", "balances", "state"]),
        "breaker_run" => Some(&["permitted", "states", "state", "changes"]),
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

/// Every value seen under each key in the committed cases, and every item of a list under
/// `key[]` (an event of `events[]`, a code of `retryableStatusCodes[]`): the pool a mutation
/// draws names from.
type Pools = BTreeMap<String, Vec<Value>>;

/// Adds `value` to the pool of `key` unless it is there.
fn pool_add(pools: &mut Pools, key: &str, value: &Value) {
    let pool = pools.entry(key.to_owned()).or_default();
    if !pool.contains(value) {
        pool.push(value.clone());
    }
}

fn collect(value: &Value, pools: &mut Pools) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                pool_add(pools, k, v);
                if let Value::Array(items) = v {
                    items
                        .iter()
                        .for_each(|item| pool_add(pools, &format!("{k}[]"), item));
                }
                collect(v, pools);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect(v, pools)),
        _ => {}
    }
}

/// gRPC status codes as a status or a list of codes takes them: names, numbers, other cases,
/// and a few that are none.
fn grpc_codes() -> Vec<Value> {
    let mut codes: Vec<Value> = retrypolicy::grpc::GRPC_CODES.iter().map(|c| json!(c)).collect();
    codes.extend([0, 1, 4, 8, 10, 13, 14, 16].map(|n| json!(n)));
    codes.extend([
        json!("unavailable"),
        json!("Resource_Exhausted"),
        json!("CANCELED"),
        json!(17),
        json!(-1),
        json!(14.5),
        json!("14"),
        json!(""),
    ]);
    codes
}

/// Values the committed cases of a group do not show, added to its pools so a mutation reaches
/// them: for gRPC, statuses by name and number, `grpc-retry-pushback-ms` values (malformed,
/// negative, past 2^31), commit and reach, durations, throttling buckets, hedging events; for
/// AWS, error codes, statuses, `x-amz-retry-after` values, modes, quota verdicts, the rate
/// limiter's constants and events; for both, the caller's draws.
fn extras(group: &str) -> Vec<(&'static str, Vec<Value>)> {
    let draws = vec![
        json!(null),
        json!(0.0),
        json!(-0.0),
        json!(1e-9),
        json!(0.25),
        json!(0.5),
        json!(0.75),
        json!(0.999_999_999),
        json!(1.0),
        json!(-0.25),
    ];
    let flags = vec![json!(true), json!(false), json!(null)];
    let grpc = || {
        let pushback = [
            "0",
            "1",
            "100",
            "250",
            "-1",
            "-5",
            "abc",
            "",
            "2147483647",
            "2147483648",
            "-2147483648",
            "18446744073709551616",
            "1.5",
            " 10",
            "+10",
            "010",
            "0x10",
            "1e3",
        ]
        .map(|p| json!(p));
        let durations = [
            "0s",
            "0.1s",
            ".1s",
            "1s",
            "0.5s",
            "1.5s",
            "10s",
            "0.000000001s",
            "0.0000000001s",
            "-1s",
            "1",
            "1ms",
            "s",
            "315576000000s",
            "315576000001s",
        ]
        .map(|d| json!(d));
        vec![
            ("status", grpc_codes()),
            ("retryableStatusCodes[]", grpc_codes()),
            ("nonFatalStatusCodes[]", grpc_codes()),
            (
                "retryableStatusCodes",
                vec![json!([]), json!([14, "UNAVAILABLE"]), json!(["OK"])],
            ),
            ("nonFatalStatusCodes", vec![json!([]), json!(["INTERNAL", 14])]),
            ("pushback[]", pushback.to_vec()),
            (
                "pushback",
                vec![
                    json!([]),
                    json!(["100", "200"]),
                    json!(["-1", "100"]),
                    json!(["100", "abc"]),
                ],
            ),
            ("committed", flags.clone()),
            ("sent", flags.clone()),
            (
                "reach",
                vec![
                    json!("processed"),
                    json!("never_sent"),
                    json!("unprocessed"),
                    json!("sent"),
                ],
            ),
            (
                "jitter",
                vec![json!("full"), json!("plus_minus_20_percent"), json!("none")],
            ),
            ("initialBackoff", durations.to_vec()),
            ("maxBackoff", durations.to_vec()),
            ("hedgingDelay", durations.to_vec()),
            (
                "maxAttempts",
                [0.0, 1.0, 2.0, 3.0, 5.0, 6.0, 2.5, 1e10]
                    .map(|n| json!(n))
                    .to_vec(),
            ),
            (
                "backoffMultiplier",
                [0.0, 0.5, 1.0, 1.5, 2.0, 3.7, 1e300, -1.0]
                    .map(|n| json!(n))
                    .to_vec(),
            ),
            (
                "maxTokens",
                [0.0, 1.0, 10.0, 2.5, 1000.0, 1001.0].map(|n| json!(n)).to_vec(),
            ),
            (
                "tokenRatio",
                [0.1, 0.5466, 0.0005, 0.001, 1.0, 0.0, 2.5]
                    .map(|n| json!(n))
                    .to_vec(),
            ),
            (
                "max_attempts_cap",
                vec![json!(null), json!(1), json!(2), json!(5), json!(10)],
            ),
            (
                "balance",
                [0, 999, 1000, 4999, 5000, 5001, 10000, 10001]
                    .map(|n| json!(n))
                    .to_vec(),
            ),
            (
                "event",
                vec![
                    json!("start"),
                    json!("hedge_due"),
                    json!("committed"),
                    json!("retry"),
                ],
            ),
            (
                "events[]",
                vec![
                    json!({"event": "committed"}),
                    json!({"event": "hedge_due", "at_ms": 500}),
                    json!({"event": "attempt_ended", "attempt": {"status": "UNAVAILABLE", "pushback": ["0"]}}),
                    json!({"event": "attempt_ended", "attempt": {"status": 14, "committed": true}}),
                ],
            ),
            ("random", draws.clone()),
        ]
    };
    let aws = || {
        vec![
            (
                "status",
                [
                    100, 200, 301, 400, 403, 404, 408, 429, 500, 502, 503, 504, 509, 599, 0, 600,
                ]
                .map(|n| json!(n))
                .to_vec(),
            ),
            (
                "code",
                [
                    "",
                    "Throttling",
                    "throttling",
                    "SlowDown",
                    "EC2ThrottledException",
                    "RequestThrottled",
                    "RequestLimitExceeded",
                    "BandwidthLimitExceeded",
                    "IDPCommunicationError",
                    "ExpiredToken",
                    "ValidationException",
                ]
                .map(|c| json!(c))
                .to_vec(),
            ),
            (
                "retry_after",
                [
                    "0",
                    "1",
                    "1500",
                    "20000",
                    "20001",
                    "-1",
                    "invalid",
                    "",
                    "1.5",
                    "18446744073709551616",
                ]
                .map(|r| json!(r))
                .to_vec(),
            ),
            ("connection_error", flags.clone()),
            ("timeout", flags.clone()),
            ("crc32_mismatch", flags.clone()),
            ("long_polling", flags.clone()),
            (
                "retryable_trait",
                vec![json!("throttling"), json!("transient"), json!("other")],
            ),
            (
                "mode",
                vec![
                    json!("standard"),
                    json!("adaptive"),
                    json!("legacy"),
                    json!("fast"),
                ],
            ),
            ("behavior", vec![json!("classic"), json!("2026"), json!("2025")]),
            ("costs", vec![json!("classic"), json!("2026")]),
            (
                "max_attempts",
                [0, 1, 2, 3, 4, 5, 10, 4_294_967_296_u64]
                    .map(|n| json!(n))
                    .to_vec(),
            ),
            (
                "max_backoff_ms",
                vec![json!(0), json!(1), json!(200), json!(20000)],
            ),
            ("service", vec![json!("ec2"), json!("dynamodb"), json!("")]),
            (
                "budget_verdict",
                vec![
                    json!(null),
                    json!({"permitted": true, "rule": "retry_quota_available", "balance": 495}),
                    json!({"permitted": false, "rule": "retry_quota_exhausted", "balance": 2}),
                    json!({"permitted": false, "rule": "token_bucket_at_or_below_half", "kind": "token_bucket"}),
                    json!({"permitted": true, "rule": "percentage_within_budget"}),
                ],
            ),
            ("random", draws.clone()),
        ]
    };
    let limiter = || {
        vec![
            (
                "kind",
                vec![json!("acquire"), json!("response"), json!("request")],
            ),
            ("throttled", flags.clone()),
            ("enabled", vec![json!(true), json!(false)]),
            ("beta", [0.7, 0.5, 0.99, 1.0, 0.0].map(|n| json!(n)).to_vec()),
            (
                "min_fill_rate",
                [0.5, 0.1, 0.0, 1e6, 1e7].map(|n| json!(n)).to_vec(),
            ),
            (
                "scale_constant",
                [0.4, 1.0, 1000.0, 1001.0].map(|n| json!(n)).to_vec(),
            ),
            ("smoothing", [0.8, 0.5, 1.0, 0.0, 1.5].map(|n| json!(n)).to_vec()),
            (
                "start_ms",
                vec![json!(null), json!(0), json!(1700), json!(86_400_000)],
            ),
            ("request_count", vec![json!(0), json!(1), json!(10)]),
            (
                "events[]",
                vec![
                    json!({"at_ms": 0, "kind": "acquire"}),
                    json!({"at_ms": 1000, "kind": "response", "throttled": true}),
                    json!({"at_ms": 1500, "kind": "response"}),
                ],
            ),
        ]
    };
    match group {
        "grpc_service_config" | "grpc_retry" | "grpc_hedge" => grpc(),
        "aws_retry" | "aws_retry_run" => aws(),
        "aws_rate_limiter_run" => limiter(),
        "run_grpc_aws" => {
            // A run's events are the run machine's, not a hedged call's.
            let mut both: Vec<_> = grpc()
                .into_iter()
                .filter(|(key, _)| !key.starts_with("event"))
                .collect();
            both.extend(aws());
            both.push((
                "outcome",
                vec![
                    json!({"kind": "grpc", "status": 14, "pushback": ["-1"]}),
                    json!({"kind": "grpc", "status": "RESOURCE_EXHAUSTED", "pushback": ["0"]}),
                    json!({"kind": "grpc", "status": "UNAVAILABLE", "reach": "unprocessed"}),
                    json!({"kind": "aws", "error": {"status": 503, "retry_after": "100"}}),
                    json!({"kind": "aws", "error": {"timeout": true}}),
                    json!({"kind": "network", "sent": true}),
                    json!({"kind": "success"}),
                ],
            ));
            both
        }
        _ => Vec::new(),
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
        6 => json!(unit(rng)),
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

/// A draw from [0, 1).
fn unit(rng: &mut Rng) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// One change somewhere in `value` that keeps its shape: a name or a value seen under the same
/// key in the corpus, a nearby whole number or fraction, or in a list one item changed, left out
/// or added (an item seen in such lists); the result is often valid.
fn vary(value: &mut Value, key: &str, pools: &Pools, rng: &mut Rng) {
    let pool = pools.get(key).filter(|p| p.len() > 1);
    match value {
        Value::Object(map) if !map.is_empty() && (pool.is_none() || rng.below(3) != 0) => {
            let k = map.keys().nth(rng.below(map.len())).cloned().unwrap_or_default();
            if let Some(v) = map.get_mut(&k) {
                vary(v, &k, pools, rng);
            }
        }
        Value::Array(items) if pool.is_none() || rng.below(3) != 0 => {
            let item_key = format!("{key}[]");
            let seen = pools.get(&item_key).filter(|p| !p.is_empty());
            match (rng.below(4), seen) {
                (0, _) if !items.is_empty() => {
                    items.remove(rng.below(items.len()));
                }
                (1, Some(seen)) => {
                    let at = rng.below(items.len() + 1);
                    items.insert(at, rng.pick(seen).clone());
                }
                _ if !items.is_empty() => {
                    let at = rng.below(items.len());
                    vary(&mut items[at], &item_key, pools, rng);
                }
                _ => {
                    if let Some(pool) = pool {
                        *value = rng.pick(pool).clone();
                    }
                }
            }
        }
        Value::Number(n) if n.is_u64() && rng.below(2) == 0 => {
            let v = n.as_u64().unwrap_or_default();
            *value = json!(rng.next() % v.saturating_mul(2).saturating_add(100).min(1 << 53));
        }
        Value::Number(n) if n.is_f64() && rng.below(2) == 0 => {
            let v = n.as_f64().unwrap_or_default();
            *value = json!(match rng.below(3) {
                0 => v * (0.5 + unit(rng)),
                1 => v + unit(rng),
                _ => unit(rng),
            });
        }
        _ => {
            if let Some(pool) = pool {
                *value = rng.pick(pool).clone();
            }
        }
    }
}

/// One change somewhere in `value` that likely breaks it: a missing key, an unknown key, a key
/// from elsewhere, an edge number or a value of the wrong type (in an object, or in an item of a
/// list).
fn break_one(value: &mut Value, pools: &Pools, rng: &mut Rng) {
    if let Value::Array(items) = value {
        if !items.is_empty() && rng.below(3) != 0 {
            let at = rng.below(items.len());
            return break_one(&mut items[at], pools, rng);
        }
    }
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
                // A key seen elsewhere (`events[]` names a list's items, not a key).
                let keys: Vec<&String> = pools.keys().filter(|k| !k.ends_with("[]")).collect();
                let k = rng.pick(&keys).to_string();
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
/// a wrong type, so no case puts one there (an argument's, or a run outcome's).
fn number_as_reason(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("reason").is_some_and(Value::is_number) {
                map.insert("reason".to_owned(), json!("KV_LOCKED"));
            }
            map.values_mut().for_each(number_as_reason);
        }
        Value::Array(items) => items.iter_mut().for_each(number_as_reason),
        _ => {}
    }
}

/// The fixture case for `input`: the core's whole answer, or its error code and field.
fn case(group: &str, index: usize, input: Value) -> Value {
    let function = function_of(group);
    let mut case = Map::new();
    case.insert(
        "id".into(),
        json!(format!("differential-{group}-{index}").replace('_', "-")),
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

/// The valid cases' inputs by [`group`].
fn read_cases(dir: &Path) -> Result<BTreeMap<String, Vec<Value>>, Box<dyn std::error::Error>> {
    let mut by_group: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for entry in std::fs::read_dir(dir)? {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(entry?.path())?)?;
        let function = doc["function"].as_str().unwrap_or_default();
        // Valid cases only: a mutation then puts every fault of an input in one argument.
        let cases = doc["cases"].as_array().into_iter().flatten();
        for input in cases.filter(|c| c.get("expect").is_some()).map(|c| &c["input"]) {
            by_group
                .entry(group(function, input))
                .or_default()
                .push(input.clone());
        }
    }
    Ok(by_group)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (out, n, seed) = match args.as_slice() {
        [out, n] => (out, n.parse::<usize>()?, 1),
        [out, n, seed] => (out, n.parse::<usize>()?, seed.parse::<u64>()?),
        _ => return Err("usage: differential <out-dir> <n> [seed]".into()),
    };
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec-fixtures/cases");
    let by_group = read_cases(&corpus)?;
    // The names and values seen in each group's own cases, and the values it is to reach: a
    // MongoDB request never lands where a Couchbase one belongs, which would put several faults
    // in one change.
    let pools: BTreeMap<&str, Pools> = by_group
        .iter()
        .map(|(group, inputs)| {
            let mut pools = Pools::new();
            inputs.iter().for_each(|input| collect(input, &mut pools));
            for (key, values) in extras(group) {
                values.iter().for_each(|v| pool_add(&mut pools, key, v));
            }
            (group.as_str(), pools)
        })
        .collect();
    let mut rng = Rng(seed);
    let mut generated: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    // Each compared function's groups in turn (run: its runs, then those with gRPC or AWS rules).
    let groups: Vec<&str> = FUNCTIONS
        .iter()
        .copied()
        .filter(compared)
        .flat_map(|f| {
            by_group
                .keys()
                .filter(move |g| function_of(g) == f)
                .map(String::as_str)
        })
        .collect();
    for index in 0..n {
        let group = groups[index % groups.len()];
        let function = function_of(group);
        let mut input = rng.pick(&by_group[group]).clone();
        // One change per case, in one argument: an input then has at most one fault, since which
        // of two faults a language reports first is its own reading order, not a difference.
        let keys: Vec<String> = input
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let key = rng.pick(&keys).clone();
        let pools = &pools[group];
        if let Some(argument) = input.get_mut(&key) {
            if rng.below(3) == 0 {
                break_one(argument, pools, &mut rng);
            } else {
                vary(argument, &key, pools, &mut rng);
            }
        }
        number_as_reason(&mut input);
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
            .entry(group)
            .or_default()
            .push(case(group, index, input));
    }
    std::fs::create_dir_all(out)?;
    for (group, cases) in generated {
        let function = function_of(group);
        let doc = json!({"schemaVersion": 1, "function": function, "source": "generated", "cases": cases});
        std::fs::write(
            Path::new(out).join(format!("differential_{group}.json")),
            serde_json::to_string(&doc)?,
        )?;
    }
    println!("{n} cases (seed {seed}) in {out}");
    Ok(())
}
