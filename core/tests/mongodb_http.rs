//! Properties of the MongoDB and HTTP rules, checked over random inputs.

use proptest::prelude::*;
use retrypolicy::http::{
    next, parse_imf_fixdate, LoopAction, LoopState, RetryLoop, NOT_IDEMPOTENT_AFTER_SEND,
};
use retrypolicy::mongodb::backpressure::{overload_backoff_ceiling_ms, overload_backoff_ms, MAX_BACKOFF_MS};
use retrypolicy::mongodb::errors::{
    surfaced_write_error, FailureKind, MongoError, NO_WRITES_PERFORMED, RETRYABLE_ERROR,
    RETRYABLE_WRITE_ERROR, SYSTEM_OVERLOADED_ERROR, TRANSIENT_TRANSACTION_ERROR,
    UNKNOWN_TRANSACTION_COMMIT_RESULT,
};
use retrypolicy::mongodb::idempotency::pending_token_rewrite;
use retrypolicy::mongodb::operations::{MongoOperation, OperationName, OPERATIONS};
use retrypolicy::mongodb::retry::{decide_mongo, MongoRequest};
use retrypolicy::mongodb::transaction::{
    step, transaction_backoff_ms, SessionState, TransactionAction, TransactionEvent, TransactionState,
    BACKOFF_MAX_MS,
};
use retrypolicy::{Backoff, FirstDelay, HttpAttempt, Jitter};
use serde_json::{json, Map, Value};

fn any_label() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        RETRYABLE_WRITE_ERROR,
        RETRYABLE_ERROR,
        SYSTEM_OVERLOADED_ERROR,
        NO_WRITES_PERFORMED,
        TRANSIENT_TRANSACTION_ERROR,
        UNKNOWN_TRANSACTION_COMMIT_RESULT,
    ])
    .prop_map(str::to_owned)
}

fn any_error() -> impl Strategy<Value = MongoError> {
    (
        prop::sample::select(vec![
            FailureKind::Server,
            FailureKind::Network,
            FailureKind::PoolCleared,
            FailureKind::ServerSelection,
            FailureKind::Handshake,
        ]),
        prop::option::of(prop::sample::select(vec![
            2, 6, 7, 50, 64, 89, 91, 134, 189, 262, 10107, 11000, 11600,
        ])),
        prop::collection::vec(any_label(), 0..4),
        prop::option::of(prop::sample::select(vec![64, 79, 91, 100])),
        prop::option::of(0u64..5_000),
    )
        .prop_map(|(kind, code, labels, wce, base)| MongoError {
            kind,
            code,
            labels,
            write_concern_code: wce,
            base_backoff_ms: base,
            ..MongoError::default()
        })
}

fn any_operation() -> impl Strategy<Value = MongoOperation> {
    (0..OPERATIONS.len(), any::<[bool; 4]>()).prop_map(|(i, f)| MongoOperation {
        name: OPERATIONS[i].0,
        multi: f[0],
        unacknowledged: f[1],
        write_stage: f[2],
        in_transaction: f[3],
    })
}

proptest! {
    #[test]
    fn overload_backoff_never_passes_the_cap(attempt in any::<u32>(), base in prop::option::of(any::<u64>()), r in 0.0f64..1.0) {
        let d = overload_backoff_ms(attempt, base, r).unwrap();
        let ceiling = overload_backoff_ceiling_ms(attempt, base);
        prop_assert!(ceiling <= MAX_BACKOFF_MS);
        prop_assert!(d <= ceiling);
        prop_assert!(d < ceiling || ceiling == 0);
    }

    #[test]
    fn transaction_backoff_stays_below_500_ms(attempt in any::<u32>(), r in 0.0f64..1.0) {
        prop_assert!(transaction_backoff_ms(attempt, r).unwrap() < BACKOFF_MAX_MS);
    }

    /// Without CSOT and without overload errors a command is retried at most once; with overload
    /// errors at most maxAdaptiveRetries times; never when the error is not retryable at all.
    #[test]
    fn retries_never_exceed_their_limit(op in any_operation(), errors in prop::collection::vec(any_error(), 1..8), max in 0u32..4) {
        let mut request = MongoRequest::new(op);
        request.max_adaptive_retries = max;
        request.random = Some(0.5);
        let mut retries = 0u32;
        let mut overloaded = false;
        for e in &errors {
            overloaded |= e.has_label(SYSTEM_OVERLOADED_ERROR);
            let d = decide_mongo(&request, e).unwrap();
            if !d.is_retry() {
                break;
            }
            retries += 1;
            request.attempts = d.attempts;
            request.overloaded = d.overloaded;
        }
        let limit = if overloaded { max.max(1) } else { 1 };
        prop_assert!(retries <= limit, "{retries} retries, limit {limit}");
    }

    /// The surfaced write error is an attempted write whenever one exists.
    #[test]
    fn the_surfaced_write_error_attempted_a_write_when_any_did(errors in prop::collection::vec(any_error(), 1..6)) {
        let i = surfaced_write_error(&errors).unwrap();
        let attempted = errors.iter().any(|e| !e.no_write_attempted());
        prop_assert_eq!(!errors[i].no_write_attempted(), attempted);
        if attempted {
            prop_assert!(errors[i + 1..].iter().all(|e| e.no_write_attempted()));
        } else {
            prop_assert_eq!(i, 0);
        }
    }

    /// The rewrite applies the increment exactly once however often each step is retried, and
    /// leaves no pending token once step two ran.
    #[test]
    fn pending_token_rewrite_round_trip(by in -1000i64..1000, step1 in 1usize..4, step2 in 1usize..4, start in prop::option::of(-1000i64..1000)) {
        let filter = json!({"_id": "day"});
        let r = pending_token_rewrite(&filter, &json!({"$inc": {"counter": by}}), true, &json!("tok"), "pending").unwrap();
        let mut docs: Vec<Map<String, Value>> = Vec::new();
        if let Some(n) = start {
            docs.push(json!({"_id": "day", "counter": n}).as_object().unwrap().clone());
        }
        for _ in 0..step1 {
            apply(&mut docs, &r.step1.filter, &r.step1.update, r.step1.upsert);
        }
        for _ in 0..step2 {
            apply(&mut docs, &r.step2.filter, &r.step2.update, r.step2.upsert);
        }
        prop_assert_eq!(docs.len(), 1);
        prop_assert_eq!(docs[0]["counter"].as_i64(), Some(start.unwrap_or(0) + by));
        prop_assert_eq!(&docs[0]["pending"], &json!([]));
    }

    /// No retry of the loop ever starts at or after the deadline, and the loop stops only when the
    /// deadline is reached or the wait would reach it.
    #[test]
    fn http_delays_never_pass_the_deadline(
        deadline in 0u64..100_000, elapsed in 0u64..120_000, attempts in 1u32..10,
        status in prop::sample::select(vec![408u16, 429, 500, 502, 503, 504]), retry_after in prop::option::of(0u64..200),
    ) {
        let retry_loop = RetryLoop {
            max_attempts: None,
            deadline_ms: Some(deadline),
            backoff: Backoff::Exponential { min_ms: 100, max_ms: 10_000, factor: 2.0, first: FirstDelay::Min },
            jitter: Jitter::None,
            method: None,
            idempotent: None,
        };
        let state = LoopState { attempts, elapsed_ms: elapsed, previous_delay_ms: None };
        let attempt = HttpAttempt::Response { status, retry_after: retry_after.map(|s| s.to_string()) };
        let d = next(&retry_loop, &state, &attempt, None, None).unwrap();
        let wanted = match retry_after {
            Some(secs) => secs * 1000,
            None => (100u64 << (attempts - 1).min(20)).min(10_000),
        };
        match d.action {
            LoopAction::Retry => {
                prop_assert!(elapsed + d.delay_ms.unwrap() < deadline);
                prop_assert_eq!(d.delay_ms, Some(wanted));
            }
            LoopAction::Stop => prop_assert!(elapsed + wanted >= deadline, "{d:?}"),
        }
    }

    /// A request with a non-idempotent method is never retried once it may have reached the
    /// server (RFC 9110 §9.2.2), unless the caller marks it idempotent; one known not to have been
    /// sent is retried like any other (here with attempts and time to spare).
    #[test]
    fn http_non_idempotent_requests_are_not_retried_after_send(
        method in prop::sample::select(vec!["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE", "POST", "PATCH", "CONNECT", "post", "delete"]),
        idempotent in prop::option::of(any::<bool>()),
        attempt in prop::sample::select(vec![
            HttpAttempt::Response { status: 503, retry_after: None },
            HttpAttempt::Response { status: 502, retry_after: None },
            HttpAttempt::NetworkError { sent: None },
            HttpAttempt::NetworkError { sent: Some(true) },
            HttpAttempt::NetworkError { sent: Some(false) },
        ]),
    ) {
        let retry_loop = RetryLoop {
            max_attempts: Some(5),
            deadline_ms: None,
            backoff: Backoff::Fixed { delay_ms: 10 },
            jitter: Jitter::None,
            method: Some(method.to_owned()),
            idempotent,
        };
        let state = LoopState { attempts: 1, elapsed_ms: 0, previous_delay_ms: None };
        let d = next(&retry_loop, &state, &attempt, None, None).unwrap();
        let by_method = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(&method.to_uppercase().as_str());
        let sent = !matches!(attempt, HttpAttempt::NetworkError { sent: Some(false) });
        let may_retry = idempotent.unwrap_or(by_method) || !sent;
        prop_assert_eq!(d.action == LoopAction::Retry, may_retry, "{:?}", d);
        if !may_retry {
            prop_assert_eq!(d.rule, NOT_IDEMPOTENT_AFTER_SEND);
        }
    }

    /// Any IMF-fixdate written from a Unix time parses back to it.
    #[test]
    fn imf_fixdate_round_trip(secs in -2_208_988_800i64..253_402_300_799) {
        prop_assert_eq!(parse_imf_fixdate(&format_imf_fixdate(secs)).unwrap(), secs * 1000);
    }

    /// withTransaction never retries a commit after MaxTimeMSExpired, never waits past its limit,
    /// and only aborts a transaction that is still open.
    #[test]
    fn with_transaction_respects_its_rules(events in prop::collection::vec((0u8..4, any_error(), 0u64..130_000, 0.0f64..1.0, 0u8..5), 1..12), timeout in prop::option::of(1u64..200_000)) {
        let sessions = [SessionState::NoTransaction, SessionState::Starting, SessionState::InProgress, SessionState::Committed, SessionState::Aborted];
        let (mut state, _) = step(&TransactionState::new(timeout), &TransactionEvent::Begin).unwrap();
        let limit = timeout.unwrap_or(120_000);
        for (kind, error, elapsed, r, s) in events {
            let session = sessions[s as usize];
            let event = match (state.phase, kind % 2) {
                (retrypolicy::mongodb::transaction::Phase::InCallback, 0) => TransactionEvent::CallbackReturned { session },
                (retrypolicy::mongodb::transaction::Phase::InCallback, _) => TransactionEvent::CallbackRaised { session, error: error.clone(), elapsed_ms: elapsed, random: Some(r) },
                (retrypolicy::mongodb::transaction::Phase::Committing, 0) => TransactionEvent::CommitSucceeded,
                (retrypolicy::mongodb::transaction::Phase::Committing, _) => TransactionEvent::CommitFailed { error: error.clone(), elapsed_ms: elapsed, random: Some(r) },
                _ => break,
            };
            let (next_state, action) = step(&state, &event).unwrap();
            match &action {
                TransactionAction::RetryCommit { .. } => {
                    prop_assert!(!error.is_max_time_ms_expired());
                    prop_assert!(elapsed < limit);
                }
                TransactionAction::RetryTransaction { abort_first, backoff_ms, .. } => {
                    prop_assert!(elapsed + backoff_ms < limit);
                    prop_assert!(*backoff_ms < BACKOFF_MAX_MS);
                    prop_assert!(error.has_label(TRANSIENT_TRANSACTION_ERROR));
                    if *abort_first { prop_assert!(session.active()); }
                }
                TransactionAction::RaiseTimeout { labels, .. } => prop_assert_eq!(labels, &error.labels),
                TransactionAction::Raise { abort_first: true, .. } => prop_assert!(session.active()),
                _ => {}
            }
            state = next_state;
        }
    }
}

/// Applies a tiny subset of MongoDB's update language to `docs`: equality filters, `$inc`,
/// `$addToSet`, `$pull` on a top-level array, and upsert.
fn apply(docs: &mut Vec<Map<String, Value>>, filter: &Value, update: &Value, upsert: bool) {
    let filter = filter.as_object().unwrap();
    let matches = |d: &Map<String, Value>| {
        filter.iter().all(|(k, v)| match d.get(k) {
            Some(Value::Array(items)) => items.contains(v),
            Some(x) => x == v,
            None => false,
        })
    };
    let index = match docs.iter().position(matches) {
        Some(i) => i,
        None if upsert => {
            let seed: Map<String, Value> = filter
                .iter()
                .filter(|(k, _)| *k == "_id")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            docs.push(seed);
            docs.len() - 1
        }
        None => return,
    };
    let doc = &mut docs[index];
    for (op, fields) in update.as_object().unwrap() {
        for (field, arg) in fields.as_object().unwrap() {
            match op.as_str() {
                "$inc" => {
                    let old = doc.get(field).and_then(Value::as_i64).unwrap_or(0);
                    doc.insert(field.clone(), json!(old + arg.as_i64().unwrap()));
                }
                "$addToSet" => {
                    let list = doc.entry(field.clone()).or_insert_with(|| json!([]));
                    let items = list.as_array_mut().unwrap();
                    if !items.contains(arg) {
                        items.push(arg.clone());
                    }
                }
                "$pull" => {
                    if let Some(Value::Array(items)) = doc.get_mut(field) {
                        items.retain(|x| x != arg);
                    }
                }
                other => panic!("the test model has no {other}"),
            }
        }
    }
}

/// Writes Unix seconds as an IMF-fixdate (H. Hinnant's `civil_from_days`).
fn format_imf_fixdate(secs: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        DAYS[days.rem_euclid(7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[test]
fn the_seed_rewrite_survives_a_lost_step_two_reply() {
    // Step two applied, its reply lost, retried: the filter no longer matches, no double count.
    let r = pending_token_rewrite(
        &json!({"_id": 1}),
        &json!({"$inc": {"n": 1}}),
        true,
        &json!("t"),
        "pending",
    )
    .unwrap();
    let mut docs = Vec::new();
    apply(&mut docs, &r.step1.filter, &r.step1.update, true);
    apply(&mut docs, &r.step2.filter, &r.step2.update, false);
    apply(&mut docs, &r.step2.filter, &r.step2.update, false);
    assert_eq!(docs[0]["n"], json!(1));
    // Without the rewrite, the same lost reply double counts.
    let mut naive = Vec::new();
    apply(&mut naive, &json!({"_id": 1}), &json!({"$inc": {"n": 1}}), true);
    apply(&mut naive, &json!({"_id": 1}), &json!({"$inc": {"n": 1}}), true);
    assert_eq!(naive[0]["n"], json!(2));
}

#[test]
fn every_operation_in_the_table_is_named_in_json() {
    for (op, _) in OPERATIONS {
        let name = op.name();
        let back: OperationName = serde_json::from_value(json!(name)).unwrap();
        assert_eq!(back, op);
    }
}
