//! The JSON API's state-machine runs: a retry budget or a circuit breaker fed a list of events,
//! each answered with its verdict, ending with the state's snapshot.

use serde_json::{json, Value};

#[cfg(feature = "guards")]
use crate::input::{BreakerEventKind, BreakerRunInput, BudgetRunInput};
use crate::input::{RunEventKind, RunInput};
#[cfg(feature = "guards")]
use retrypolicy::BudgetEventKind;
use retrypolicy::*;

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `budget_run`: each event recorded (a `retry` event is asked first and recorded only when
/// permitted), then the verdict for a retry at that moment: of a timeout after a `timeout` event,
/// of an error otherwise. With `summary`, totals and the last verdict instead of one per event,
/// so a run of any length answers in flat memory. An event's error is checked when it is reached
/// (the events before it are replayed first).
#[cfg(feature = "guards")]
pub(crate) fn budget_run(input: &BudgetRunInput) -> Result<Value, Error> {
    let config = BudgetConfig::from_document(&input.budget, "budget")?;
    let mut budget = match &input.state {
        Some(snapshot) => RetryBudget::restore(&config, snapshot, "state")?,
        None => RetryBudget::new(&config),
    };
    let keep = !input.summary;
    let mut verdicts = Vec::with_capacity(if keep { input.events.len() } else { 0 });
    let (mut asked, mut permitted, mut last) = (0u64, 0u64, None);
    for (i, e) in input.events.iter().enumerate() {
        let verdict = match e.event(i)? {
            BudgetEvent::Retry { cause } => {
                let v = budget.try_retry(e.at_ms, cause);
                asked += 1;
                permitted += u64::from(v.permitted);
                v
            }
            other => {
                budget.record(e.at_ms, other);
                let cause = if e.kind == BudgetEventKind::Timeout {
                    RetryCause::Timeout
                } else {
                    RetryCause::Error
                };
                budget.permit(e.at_ms, cause)
            }
        };
        if keep {
            verdicts.push(verdict);
        }
        last = Some(verdict);
    }
    if input.summary {
        return Ok(json!({
            "budget": to_value(&config.to_document()),
            "summary": {
                "events": input.events.len(),
                "retries_asked": asked,
                "retries_permitted": permitted,
                "retries_refused": asked - permitted,
                "last": to_value(&last),
            },
            "state": to_value(&budget.snapshot()),
        }));
    }
    Ok(json!({
        "budget": to_value(&config.to_document()),
        "verdicts": to_value(&verdicts),
        "permitted": verdicts.iter().map(|v| v.permitted).collect::<Vec<_>>(),
        "balances": verdicts.iter().map(|v| v.balance).collect::<Vec<_>>(),
        "state": to_value(&budget.snapshot()),
    }))
}

/// `breaker_run`: a `request` event asks the breaker (and may send the canary); an outcome is
/// recorded. `verdicts` and `permitted` hold null for outcomes; `states` the state after each;
/// `changes` the state changes each event made, in order (an empty list for none).
#[cfg(feature = "guards")]
pub(crate) fn breaker_run(input: &BreakerRunInput) -> Result<Value, Error> {
    let config = BreakerConfig::from_document(&input.breaker, "breaker")?;
    let mut breaker = match &input.state {
        Some(snapshot) => CircuitBreaker::restore(&config, snapshot, "state")?,
        None => CircuitBreaker::new(&config),
    };
    let mut verdicts = Vec::with_capacity(input.events.len());
    let mut states = Vec::with_capacity(input.events.len());
    let mut changes = Vec::with_capacity(input.events.len());
    for e in &input.events {
        let outcome = match e.kind {
            BreakerEventKind::Request => None,
            BreakerEventKind::Success => Some(BreakerOutcome::Success),
            BreakerEventKind::Failure => Some(BreakerOutcome::Failure),
            BreakerEventKind::Timeout => Some(BreakerOutcome::Timeout),
        };
        verdicts.push(match outcome {
            None => Some(breaker.permit(e.at_ms)),
            Some(o) => {
                breaker.record(e.at_ms, o);
                None
            }
        });
        states.push(breaker.state(e.at_ms).name());
        changes.push(breaker.last_changes());
    }
    Ok(json!({
        "breaker": to_value(&config.to_document()),
        "verdicts": to_value(&verdicts),
        "permitted": verdicts.iter().map(|v| v.map(|v| v.permitted)).collect::<Vec<_>>(),
        "states": states,
        "changes": to_value(&changes),
        "state": to_value(&breaker.snapshot()),
    }))
}

/// `run`: a retry run replayed through its events; each event's step, then summaries: `actions`,
/// `delays_ms` (each wait's), `rules`, `end`, `attempts_sent`, the run's `stats`, the breaker's
/// state changes (`breaker_changes`, in order), what each step is for an observer (`signals`), the budget's and the breaker's state after the run. A machine error names its event (`events[2].outcome.status`).
pub(crate) fn run(input: &RunInput) -> Result<Value, Error> {
    let (mut budget, mut breaker) = run_guards(input)?;
    let host = input.host.as_ref().map(|h| h as &dyn RetryStrategy);
    let mut machine = Run::new(input.run.clone()).map_err(|e| placed("run", e))?;
    let mut steps = Vec::with_capacity(input.events.len());
    for (i, e) in input.events.iter().enumerate() {
        let at = |e: Error| placed(&format!("events[{i}]"), e);
        let clock = Clock {
            now_ms: e.at_ms,
            random: e.random,
            now_unix_ms: e.now_unix_ms,
        };
        let guards = Guards {
            budget: budget.as_mut(),
            breaker: breaker.as_mut(),
        };
        if e.outcome.is_some() != (e.event == RunEventKind::AttemptEnded) {
            return Err(at(if e.outcome.is_some() {
                Error::UnknownField {
                    field: "outcome".to_owned(),
                }
            } else {
                Error::MissingField {
                    field: "outcome".to_owned(),
                }
            }));
        }
        let step = match (e.event, &e.outcome) {
            (RunEventKind::Start, _) => machine.start_with_strategy(clock, guards, host),
            (RunEventKind::WaitEnded, _) => machine.wait_ended_with_strategy(clock, guards, host),
            (RunEventKind::Cancel, _) => machine.cancel(clock, guards),
            (RunEventKind::AttemptEnded, Some(outcome)) => {
                machine.attempt_ended(outcome, clock, guards, host)
            }
            (RunEventKind::AttemptEnded, None) => unreachable!("checked above"),
        }
        .map_err(at)?;
        steps.push(step);
    }
    let last = steps.last();
    let guard_states = states(&budget, &breaker);
    Ok(json!({
        "steps": to_value(&steps),
        "actions": steps.iter().map(|s| s.action).collect::<Vec<_>>(),
        "delays_ms": steps.iter().filter_map(|s| s.delay_ms).collect::<Vec<_>>(),
        "rules": steps.iter().map(|s| s.rule).collect::<Vec<_>>(),
        "end": last.and_then(|s| s.end),
        "last": to_value(&last),
        "attempts_sent": machine.attempts_sent(),
        "stats": to_value(&machine.stats()),
        "breaker_changes": to_value(&steps.iter().flat_map(|s| s.breaker_changes.iter().copied()).collect::<Vec<_>>()),
        "signals": steps.iter().map(|s| s.signal).collect::<Vec<_>>(),
        "budget_state": guard_states.0,
        "breaker_state": guard_states.1,
    }))
}

/// The run's budget and breaker, each from its document and its snapshot, if it has one.
#[cfg(feature = "guards")]
fn run_guards(input: &RunInput) -> Result<(Option<RetryBudget>, Option<CircuitBreaker>), Error> {
    let budget = match &input.budget {
        Some(doc) => {
            let config = BudgetConfig::from_document(doc, "budget")?;
            Some(match &input.budget_state {
                Some(snapshot) => RetryBudget::restore(&config, snapshot, "budget_state")?,
                None => RetryBudget::new(&config),
            })
        }
        None if input.budget_state.is_some() => {
            return Err(Error::MissingField {
                field: "budget".to_owned(),
            })
        }
        None => None,
    };
    let breaker = match &input.breaker {
        Some(doc) => {
            let config = BreakerConfig::from_document(doc, "breaker")?;
            Some(match &input.breaker_state {
                Some(snapshot) => CircuitBreaker::restore(&config, snapshot, "breaker_state")?,
                None => CircuitBreaker::new(&config),
            })
        }
        None if input.breaker_state.is_some() => {
            return Err(Error::MissingField {
                field: "breaker".to_owned(),
            })
        }
        None => None,
    };
    Ok((budget, breaker))
}

/// No budget or breaker: this build has none (the `guards` feature), nor their fields in `input`.
#[cfg(not(feature = "guards"))]
fn run_guards(_input: &RunInput) -> Result<(Option<RetryBudget>, Option<CircuitBreaker>), Error> {
    Ok((None, None))
}

/// The budget's and the breaker's snapshots after a run (null for none).
#[cfg(feature = "guards")]
fn states(budget: &Option<RetryBudget>, breaker: &Option<CircuitBreaker>) -> (Value, Value) {
    (
        to_value(&budget.as_ref().map(RetryBudget::snapshot)),
        to_value(&breaker.as_ref().map(CircuitBreaker::snapshot)),
    )
}

/// No budget or breaker, so no snapshots: null, null.
#[cfg(not(feature = "guards"))]
fn states(_budget: &Option<RetryBudget>, _breaker: &Option<CircuitBreaker>) -> (Value, Value) {
    (Value::Null, Value::Null)
}

/// `e` with its field placed under `prefix` (`event` and `attempt.status`: `event.attempt.status`;
/// an error about the document itself: `prefix`).
pub fn placed(prefix: &str, e: Error) -> Error {
    let field = e.field().to_owned();
    match e.code() {
        "malformed_json" | "unsupported_version" => e,
        _ if field.is_empty() || field == "(document)" => e.with_field(prefix),
        _ => e.with_field(&format!("{prefix}.{field}")),
    }
}

#[cfg(all(test, feature = "http", feature = "grpc", feature = "aws"))]
mod tests {
    use serde_json::{json, Value};

    /// The error of a `rules` run whose second event's attempt ended with `outcome`.
    fn outcome_error(rules: Value, outcome: Value) -> retrypolicy::Error {
        let input = json!({"run": {"rules": rules, "timeout_ms": 1000}, "events": [
            {"event": "start", "at_ms": 0},
            {"event": "attempt_ended", "at_ms": 1, "outcome": outcome}]});
        crate::api::call("run", &input).unwrap_err()
    }

    #[test]
    fn an_outcome_error_names_the_field_inside_the_outcome_and_its_value() {
        for (rules, outcome, code, field, value) in [
            (
                json!({"grpc": {}}),
                json!({"kind": "grpc", "status": "NOPE"}),
                "out_of_range",
                "status",
                "NOPE",
            ),
            (
                json!({"grpc": {}}),
                json!({"kind": "grpc", "status": 14, "reach": "moon"}),
                "unknown_name",
                "reach",
                "moon",
            ),
            (
                json!({"grpc": {}}),
                json!({"kind": "grpc", "status": 14, "pushback": ["1", 2]}),
                "invalid_type",
                "pushback[1]",
                "number 2",
            ),
            (
                json!({"http": {}}),
                json!({"kind": "http", "status": "x"}),
                "invalid_type",
                "status",
                "string \"x\"",
            ),
            (
                json!({"http": {}}),
                json!({"retry_after": 5, "kind": "http", "status": 503}),
                "invalid_type",
                "retry_after",
                "number 5",
            ),
            (
                json!({"http": {}}),
                json!({"kind": "reason", "reason": "NOPE"}),
                "unknown_reason",
                "reason",
                "NOPE",
            ),
            (
                json!({"aws": {}}),
                json!({"kind": "aws", "error": {"status": "x"}}),
                "invalid_type",
                "error.status",
                "string \"x\"",
            ),
            (
                json!({"aws": {}}),
                json!({"kind": "aws", "error": {"code": "Throttling", "timeout": 3}}),
                "invalid_type",
                "error.timeout",
                "number 3",
            ),
        ] {
            let e = outcome_error(rules, outcome.clone());
            let text = e.to_string();
            assert_eq!(
                (e.code(), e.field()),
                (code, format!("events[1].outcome.{field}").as_str()),
                "{outcome}: {text}"
            );
            assert!(text.contains(value), "{outcome}: {text}");
            assert!(!text.contains("\"kind\""), "{outcome} echoed whole: {text}");
        }
        // What was placed before stays placed.
        let e = outcome_error(
            json!({"grpc": {}}),
            json!({"kind": "grpc", "status": 14, "extra": 1}),
        );
        assert_eq!(
            (e.code(), e.field()),
            ("unknown_field", "events[1].outcome.extra")
        );
        let e = outcome_error(json!({"http": {}}), json!({"kind": "http"}));
        assert_eq!(
            (e.code(), e.field()),
            ("missing_field", "events[1].outcome.status")
        );
        let e = outcome_error(json!({"http": {}}), json!({"kind": "nope"}));
        assert_eq!((e.code(), e.field()), ("unknown_name", "events[1].outcome.kind"));
    }
}
