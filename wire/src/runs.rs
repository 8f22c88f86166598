//! The JSON API's state-machine runs: a retry budget or a circuit breaker fed a list of events,
//! each answered with its verdict, ending with the state's snapshot.

use serde_json::{json, Value};

use crate::input::{BreakerEventKind, BreakerRunInput, BudgetRunInput};
use retrypolicy::BudgetEventKind;
use retrypolicy::*;

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// `budget_run`: each event recorded (a `retry` event is asked first and recorded only when
/// permitted), then the verdict for a retry at that moment: of a timeout after a `timeout` event,
/// of an error otherwise.
pub(crate) fn budget_run(input: &BudgetRunInput) -> Result<Value, Error> {
    let config = BudgetConfig::from_document(&input.budget, "budget")?;
    let mut budget = match &input.state {
        Some(snapshot) => RetryBudget::restore(&config, snapshot, "state")?,
        None => RetryBudget::new(&config),
    };
    let events = input
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| e.event(i))
        .collect::<Result<Vec<_>, Error>>()?;
    let mut verdicts = Vec::with_capacity(events.len());
    for (e, event) in input.events.iter().zip(events) {
        let verdict = match event {
            BudgetEvent::Retry { cause } => budget.try_retry(e.at_ms, cause),
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
        verdicts.push(verdict);
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
/// recorded. `verdicts` and `permitted` hold null for outcomes; `states` the state after each.
pub(crate) fn breaker_run(input: &BreakerRunInput) -> Result<Value, Error> {
    let config = BreakerConfig::from_document(&input.breaker, "breaker")?;
    let mut breaker = match &input.state {
        Some(snapshot) => CircuitBreaker::restore(&config, snapshot, "state")?,
        None => CircuitBreaker::new(&config),
    };
    let mut verdicts = Vec::with_capacity(input.events.len());
    let mut states = Vec::with_capacity(input.events.len());
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
    }
    Ok(json!({
        "breaker": to_value(&config.to_document()),
        "verdicts": to_value(&verdicts),
        "permitted": verdicts.iter().map(|v| v.map(|v| v.permitted)).collect::<Vec<_>>(),
        "states": states,
        "state": to_value(&breaker.snapshot()),
    }))
}
