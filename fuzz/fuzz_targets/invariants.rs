//! The promises of `decide`, on structured inputs: any valid request, reason and policy.
//!
//! 1. Never past the deadline: a retry only while `elapsed_ms < timeout_ms`, and its delay ends
//!    at or before the timeout (`delay_ms <= timeout_ms - elapsed_ms`, so no overflow either).
//!    RFC 0049 "Capping the Retry Duration" as `decide.rs` implements it: a longer delay is cut to
//!    the time left (`capped`), and a delay that ends exactly at the timeout cancels the request
//!    when it ends (`then_cancel` exactly when `delay_ms == timeout_ms - elapsed_ms`). The delay is
//!    the deciding rule's backoff (controlled, or the policy's best effort) cut to the time left,
//!    `capped` exactly when cut. At or past the timeout the answer is no retry, `deadline_passed`.
//! 2. A request that is not idempotent is retried only for a reason whose RFC table row allows
//!    non-idempotent retry (`allows_non_idempotent_retry`: the request never reached the server).
//! 3. UNKNOWN is never retried, unless the policy opts into `retry_unknown_if_idempotent`, and then
//!    only for an idempotent request.
//! 4. The same decision (or the same error) through every entry point: `decide`,
//!    `decide_with(.., None)`, `decide_with` with the policy's own strategy as a host strategy,
//!    `decide_before_strategy` then the policy's strategy then `decide_after_strategy`, and the
//!    JSON API's `decide` and `decide_with` (the request, reason and policy as JSON).
#![no_main]

mod limit;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use retrypolicy::operation::KV_CATALOG;
use retrypolicy::*;
use serde_json::{json, Value};

/// A duration: often small, so deadlines and capping are reached, sometimes any u64.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Ms {
    Small(u16),
    Any(u64),
}

impl Ms {
    fn get(self) -> u64 {
        match self {
            Ms::Small(n) => u64::from(n),
            Ms::Any(n) => n,
        }
    }
}

/// A random draw: a valid one in `[0, 1)`, or any f64 (NaN, infinities, out of range).
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Draw {
    Unit(u32),
    Raw(f64),
}

impl Draw {
    fn get(self) -> f64 {
        match self {
            Draw::Unit(n) => f64::from(n) / 4_294_967_296.0,
            Draw::Raw(r) => r,
        }
    }
}

/// An operation of any service; the bytes index the KV catalog and the HTTP methods.
#[derive(Arbitrary, Debug)]
enum Op {
    Kv(u8),
    Query(bool),
    Analytics(bool),
    Search,
    Views,
    ClusterManager(u8),
    Management(u8),
}

/// Every HTTP method.
const METHODS: [HttpMethod; 7] = [
    HttpMethod::Get,
    HttpMethod::Head,
    HttpMethod::Post,
    HttpMethod::Put,
    HttpMethod::Delete,
    HttpMethod::Patch,
    HttpMethod::Options,
];

impl Op {
    fn get(&self) -> Operation {
        let method = |i: u8| METHODS[usize::from(i) % METHODS.len()];
        match *self {
            Op::Kv(i) => Operation::Kv(KV_CATALOG[usize::from(i) % KV_CATALOG.len()].operation),
            Op::Query(readonly) => Operation::Query { readonly },
            Op::Analytics(readonly) => Operation::Analytics { readonly },
            Op::Search => Operation::Search,
            Op::Views => Operation::Views,
            Op::ClusterManager(i) => Operation::ClusterManager(method(i)),
            Op::Management(i) => Operation::Management(method(i)),
        }
    }
}

/// A growth factor in [1, 1000]: the default 2 (its integer path), or any other.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Factor {
    Two,
    Any(u32),
}

/// A backoff calculator; exponential bounds are put in order.
#[derive(Arbitrary, Debug)]
enum BackoffIn {
    Exponential {
        a: Ms,
        b: Ms,
        factor: Factor,
        zero_first: bool,
    },
    Controlled,
    Fixed(Ms),
}

/// A policy: strategy, backoff, jitter (indexing `JITTERS`) and the four compat options.
#[derive(Arbitrary, Debug)]
struct PolicyIn {
    fail_fast: bool,
    backoff: BackoffIn,
    jitter: u8,
    compat: [bool; 4],
}

/// Every jitter mode.
const JITTERS: [Jitter; 4] = [Jitter::None, Jitter::Full, Jitter::Equal, Jitter::Decorrelated];

/// Fail fast or best effort.
fn strategy(fail_fast: bool) -> StrategyKind {
    if fail_fast {
        StrategyKind::FailFast
    } else {
        StrategyKind::BestEffort
    }
}

impl PolicyIn {
    /// A valid policy: the bounds ordered, the factor in range.
    fn get(&self) -> Policy {
        let backoff = match self.backoff {
            BackoffIn::Exponential {
                a,
                b,
                factor,
                zero_first,
            } => Backoff::Exponential {
                min_ms: a.get().min(b.get()),
                max_ms: a.get().max(b.get()),
                factor: match factor {
                    Factor::Two => 2.0,
                    Factor::Any(n) => 1.0 + 999.0 * (f64::from(n) / f64::from(u32::MAX)),
                },
                first: if zero_first {
                    FirstDelay::Zero
                } else {
                    FirstDelay::Min
                },
            },
            BackoffIn::Controlled => Backoff::Controlled,
            BackoffIn::Fixed(d) => Backoff::Fixed { delay_ms: d.get() },
        };
        let [a, b, c, d] = self.compat;
        let policy = Policy {
            strategy: strategy(self.fail_fast),
            backoff,
            jitter: JITTERS[usize::from(self.jitter) % JITTERS.len()],
            compat: Compat {
                collection_outdated_not_always_retry: a,
                retry_kv_busy: b,
                query_retry_4040_to_4090: c,
                retry_unknown_if_idempotent: d,
            },
            ..Policy::RFC
        };
        policy.validate().expect("the harness builds valid policies");
        policy
    }
}

/// One fuzz case: a request, the reason it failed, and a policy.
#[derive(Arbitrary, Debug)]
struct Input {
    operation: Op,
    idempotent: Option<bool>,
    attempts: u32,
    elapsed: Ms,
    timeout: Ms,
    previous_reasons: Vec<u8>,
    strategy: Option<bool>,
    random: Option<Draw>,
    previous_delay: Option<Ms>,
    reason: u8,
    policy: PolicyIn,
}

/// The reason a byte picks from the RFC table.
fn reason_at(i: u8) -> RetryReason {
    RetryReason::ALL[usize::from(i) % RetryReason::ALL.len()]
}

/// Promises 1 to 3 for one decision.
fn check_promises(request: &Request, reason: RetryReason, policy: &Policy, decision: &Decision) {
    let idempotent = request.is_idempotent();
    let before_deadline = request.elapsed_ms < request.timeout_ms;
    match decision {
        Decision::Retry(r) => {
            assert!(before_deadline, "a retry at or past the deadline: {r:?}");
            let remaining = request.timeout_ms - request.elapsed_ms;
            assert!(r.delay_ms <= remaining, "a delay past the deadline: {r:?}");
            assert_eq!(r.then_cancel, r.delay_ms == remaining, "then_cancel: {r:?}");
            assert!(!r.capped || r.then_cancel, "capped but not cancelled: {r:?}");
            assert!(
                idempotent || reason.allows_non_idempotent_retry(),
                "a non-idempotent request retried for {reason}: {r:?}"
            );
            if reason == RetryReason::Unknown {
                assert!(
                    policy.compat.retry_unknown_if_idempotent && idempotent,
                    "UNKNOWN retried: {r:?}"
                );
            }
            // The delay is the rule's backoff, cut to the time left (`capped` exactly when it was cut).
            let uncapped = match r.rule {
                Rule::AlwaysRetryControlledBackoff => controlled_backoff(request.attempts),
                Rule::BestEffortBackoff => backoff_delay(
                    &policy.backoff,
                    policy.jitter,
                    request.attempts,
                    request.random,
                    request.previous_delay_ms,
                )
                .expect("best effort retried, so its backoff has what it needs"),
                other => panic!("a retry by rule {other:?}: only built-in rules decide here"),
            };
            assert_eq!(r.delay_ms, uncapped.min(remaining), "{r:?}");
            assert_eq!(r.capped, uncapped > remaining, "capped: {r:?}");
            assert_eq!(
                (r.reason, r.attempts, r.idempotent),
                (reason, request.attempts, idempotent)
            );
        }
        Decision::NoRetry(n) => {
            assert_eq!(
                n.cause == NoRetryCause::DeadlinePassed,
                !before_deadline,
                "deadline cause: {n:?}"
            );
            if before_deadline && reason == RetryReason::Unknown && !policy.compat.retry_unknown_if_idempotent
            {
                assert_eq!(n.cause, NoRetryCause::UnknownReason, "{n:?}");
            }
            assert_eq!(
                (n.reason, n.attempts, n.idempotent),
                (reason, request.attempts, idempotent)
            );
        }
    }
    // Always-retry reasons bypass the strategy (and idempotency), with the controlled backoff.
    if before_deadline && reason != RetryReason::Unknown && policy.compat.always_retry(reason) {
        let remaining = request.timeout_ms - request.elapsed_ms;
        let want = controlled_backoff(request.attempts).min(remaining);
        assert_eq!(decision.delay_ms(), Some(want), "{decision:?}");
        assert_eq!(
            decision.rule(),
            Rule::AlwaysRetryControlledBackoff,
            "{decision:?}"
        );
    }
}

/// The policy's own strategy, as a host would pass it.
fn policy_strategy(policy: &Policy) -> Box<dyn RetryStrategy> {
    match policy.strategy {
        StrategyKind::BestEffort => Box::new(policy.best_effort()),
        StrategyKind::FailFast => Box::new(FailFast),
    }
}

/// Promise 4 for the Rust entry points.
fn check_rust_entry_points(
    request: &Request,
    reason: RetryReason,
    policy: &Policy,
) -> Result<Decision, Error> {
    let decided = decide(request, reason, policy);
    assert_eq!(
        decided,
        decide_with(request, reason, policy, None),
        "decide_with(None)"
    );
    let host = policy_strategy(policy);
    assert_eq!(
        decided,
        decide_with(request, reason, policy, Some(host.as_ref())),
        "decide_with(the policy's strategy)"
    );
    let stepped = decide_before_strategy(request, reason, policy).and_then(|before| match before {
        Some(d) => Ok(d),
        None => host
            .retry_after(request, reason)
            .map(|verdict| decide_after_strategy(request, reason, verdict)),
    });
    assert_eq!(
        decided, stepped,
        "decide_before_strategy + strategy + decide_after_strategy"
    );
    decided
}

/// Promise 4 through the JSON API, for requests JSON can carry (JSON has no NaN or infinity).
fn check_json_entry_points(
    request: &Request,
    reason: RetryReason,
    policy: &Policy,
    decided: &Result<Decision, Error>,
) {
    if request.random.is_some_and(|r| !r.is_finite()) {
        return;
    }
    let input = json!({ "request": request, "reason": reason, "policy": policy });
    for function in ["decide", "decide_with"] {
        let answer = retrypolicy_wire::api::call(function, &input);
        match (decided, &answer) {
            (Ok(d), Ok(v)) => assert_eq!(&serde_json::to_value(d).unwrap_or(Value::Null), v, "{function}"),
            // The wire layer reads the draw with the request, so its field is `request.random`.
            (Err(e), Err(f)) => {
                assert_eq!(e.code(), f.code(), "{function}: {e} / {f}");
                assert!(f.field().ends_with(e.field()), "{function}: {e} / {f}");
            }
            _ => panic!("{function} through JSON: {answer:?}, in Rust: {decided:?}; input {input}"),
        }
    }
}

fuzz_target!(|input: Input| {
    let policy = input.policy.get();
    let reason = reason_at(input.reason);
    let request = Request {
        operation: input.operation.get(),
        idempotent: input.idempotent,
        attempts: input.attempts,
        elapsed_ms: input.elapsed.get(),
        timeout_ms: input.timeout.get(),
        previous_reasons: input
            .previous_reasons
            .iter()
            .take(8)
            .map(|i| reason_at(*i))
            .collect(),
        strategy: input.strategy.map(strategy),
        random: input.random.map(Draw::get),
        previous_delay_ms: input.previous_delay.map(Ms::get),
    };
    let decided = check_rust_entry_points(&request, reason, &policy);
    match &decided {
        Ok(decision) => check_promises(&request, reason, &policy, decision),
        // The only refusals of a valid request and policy: a bad draw, or none where jitter needs one.
        Err(e) => assert!(matches!(e.code(), "invalid_random" | "missing_field"), "{e}"),
    }
    check_json_entry_points(&request, reason, &policy, &decided);
});
