//! Seed 004's bounded retry loop, driven by the host one attempt at a time with [`next`].

use std::fmt;

use serde::{Deserialize, Serialize};

use super::*;
use crate::backoff::{backoff_delay, Backoff, FirstDelay, Jitter};
use crate::error::Error;

pub(crate) fn default_loop_backoff() -> Backoff {
    Backoff::Exponential {
        min_ms: 100,
        max_ms: 10_000,
        factor: 2.0,
        first: FirstDelay::Min,
    }
}

/// `null` read as [`default_loop_backoff`]'s value, as the key left out is.
pub(crate) fn default_loop_backoff_if_null<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Backoff, D::Error> {
    crate::serde_form::or_else(d, default_loop_backoff)
}

/// A bounded retry loop: at most `max_attempts` attempts and/or no attempt starting after
/// `deadline_ms` (measured from the loop's start); at least one bound is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryLoop {
    /// Attempts in all, the first included (seed 004's `maxAttempts`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// No attempt starts later than this many ms after the first one started.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub deadline_ms: Option<u64>,
    /// The backoff between attempts when no Retry-After applies (default 100 ms × 2^n up to 10 s).
    #[serde(
        default = "default_loop_backoff",
        deserialize_with = "default_loop_backoff_if_null"
    )]
    pub backoff: Backoff,
    /// The jitter applied to that backoff (default none; a draw is then not needed).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub jitter: Jitter,
    /// The request's HTTP method, for RFC 9110's idempotent-method rule; absent, the request is
    /// taken as idempotent (seed 004's loop retries every transient result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// The caller's word that the request is idempotent (or not) whatever its method, e.g. a POST
    /// carrying an idempotency key; it wins over `method`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
}

impl RetryLoop {
    /// Checks that the loop is bounded and its backoff valid.
    pub fn validate(&self) -> Result<(), Error> {
        if self.max_attempts.is_none() && self.deadline_ms.is_none() {
            return Err(Error::MissingField {
                field: "max_attempts or deadline_ms".to_owned(),
            });
        }
        if self.max_attempts == Some(0) {
            return Err(Error::OutOfRange {
                field: "max_attempts".to_owned(),
                value: "0".to_owned(),
                expected: "at least 1".to_owned(),
            });
        }
        self.backoff.validate("backoff")
    }

    /// Whether the request may be sent again after it reached the server: the caller's
    /// `idempotent`, else the method's RFC 9110 property, else yes.
    pub fn request_is_idempotent(&self) -> bool {
        self.idempotent
            .unwrap_or_else(|| self.method.as_deref().is_none_or(is_idempotent_method))
    }
}

/// Where the loop is when an attempt's result arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopState {
    /// Attempts made, the one that just finished included (1 after the first).
    pub attempts: u32,
    /// Time since the first attempt started, in ms.
    #[serde(with = "crate::serde_form::ms")]
    pub elapsed_ms: u64,
    /// The previous delay, for decorrelated jitter.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub previous_delay_ms: Option<u64>,
}

/// Stop or retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoopAction {
    /// Send the request again after `delay_ms`.
    Retry,
    /// Stop: the step's outcome is `outcome`.
    Stop,
}

/// The loop's decision after one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoopDecision {
    /// Retry or stop.
    pub action: LoopAction,
    /// The step's outcome when stopping: final, or transient when the loop ran out of attempts or time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<StepOutcome>,
    /// The class of the attempt's result.
    pub class: HttpClass,
    /// The delay before the retry (a decimal string past 2^53, like every duration).
    #[serde(
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub delay_ms: Option<u64>,
    /// Whether the delay came from `Retry-After`.
    pub from_retry_after: bool,
    /// Whether a `Retry-After` header was present but malformed, and so ignored for the backoff.
    pub retry_after_ignored: bool,
    /// The wait a valid `Retry-After` asked for, in ms, also when the loop stops because that
    /// wait reaches the deadline (so the caller can say when to try again).
    #[serde(
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub retry_after_ms: Option<u64>,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// The source.
    pub section: &'static str,
}

impl fmt::Display for LoopDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action {
            LoopAction::Retry => write!(
                f,
                "retry after {} ms ({}, {})",
                self.delay_ms.unwrap_or(0),
                self.rule,
                self.section
            ),
            LoopAction::Stop => match self.retry_after_ms {
                Some(ms) if self.rule == DEADLINE_BEFORE_RETRY => write!(
                    f,
                    "stop: the server asked to retry after {ms} ms, which reaches the deadline ({}, {})",
                    self.rule, self.section
                ),
                _ => write!(f, "stop ({}, {})", self.rule, self.section),
            },
        }
    }
}

/// The rule that stops the loop after a transient result of a non-idempotent request that may
/// have reached the server (RFC 9110 §9.2.2: a client SHOULD NOT automatically retry it).
pub const NOT_IDEMPOTENT_AFTER_SEND: &str = "not_idempotent_after_send";

/// Seed 004 with this project's deadline rule (README).
const DEADLINE_SECTION: &str =
    "Seed 004, Retriable Sagas: the retry mechanism (no attempt starts at or after the deadline)";

/// The loop's next move after an attempt (seed 004): a final result stops the loop with a final
/// outcome; a transient one is retried after the `Retry-After` delay (when the status honours it)
/// or the backoff, unless the attempts are used up or that wait would reach the deadline, which
/// stop the loop with a transient outcome (and the server's `retry_after_ms`). `now_unix_ms` is needed
/// only for a `Retry-After` date; `random` only when the loop has jitter.
pub fn next(
    retry_loop: &RetryLoop,
    state: &LoopState,
    attempt: &HttpAttempt,
    now_unix_ms: Option<u64>,
    random: Option<f64>,
) -> Result<LoopDecision, Error> {
    retry_loop.validate()?;
    if state.attempts == 0 {
        return Err(Error::OutOfRange {
            field: "state.attempts".to_owned(),
            value: "0".to_owned(),
            expected: "at least 1: the attempt that just finished".to_owned(),
        });
    }
    let view = AttemptView::of(attempt, now_unix_ms)?;
    let c = view.class;
    let stop = |outcome: StepOutcome, rule: &'static str, section: &'static str| LoopDecision {
        action: LoopAction::Stop,
        outcome: Some(outcome),
        class: c.class,
        delay_ms: None,
        from_retry_after: false,
        retry_after_ignored: false,
        retry_after_ms: None,
        rule,
        section,
    };
    if c.outcome == StepOutcome::Final {
        return Ok(stop(StepOutcome::Final, c.rule, c.section));
    }
    // RFC 9110 §9.2.2: "A client SHOULD NOT automatically retry a request with a non-idempotent
    // method unless it has some means to know that the request semantics are actually idempotent
    // ... or some means to detect that the original request was never applied." A response or a
    // failure after sending may mean it was applied (as urllib3's `allowed_methods` reads it).
    if !retry_loop.request_is_idempotent() && attempt.maybe_sent() {
        return Ok(stop(
            StepOutcome::Transient,
            NOT_IDEMPOTENT_AFTER_SEND,
            IDEMPOTENT_METHODS_SECTION,
        ));
    }
    if retry_loop.max_attempts.is_some_and(|m| state.attempts >= m) {
        return Ok(stop(
            StepOutcome::Transient,
            "max_attempts_reached",
            SEED_RETRY_LOOP_SECTION,
        ));
    }
    let left = retry_loop.deadline_ms.map(|d| d.saturating_sub(state.elapsed_ms));
    if left == Some(0) {
        return Ok(stop(
            StepOutcome::Transient,
            "deadline_reached",
            SEED_RETRY_LOOP_SECTION,
        ));
    }
    let backoff = || {
        backoff_delay(
            &retry_loop.backoff,
            retry_loop.jitter,
            state.attempts - 1,
            random,
            state.previous_delay_ms,
        )
    };
    let (wanted, from_retry_after, retry_after_ignored) = match view.retry_after {
        RetryAfterHeader::Valid(d) => (d, true, false),
        RetryAfterHeader::Malformed => (backoff()?, false, true),
        RetryAfterHeader::None => (backoff()?, false, false),
    };
    // No attempt starts at or after the deadline: a wait that reaches it ends the loop now, with
    // the transient outcome and what the server asked for.
    if left.is_some_and(|l| wanted >= l) {
        return Ok(LoopDecision {
            retry_after_ms: from_retry_after.then_some(wanted),
            ..stop(StepOutcome::Transient, DEADLINE_BEFORE_RETRY, DEADLINE_SECTION)
        });
    }
    let (rule, section) = if from_retry_after {
        ("retry_after", RETRY_AFTER_SECTION)
    } else {
        (c.rule, c.section)
    };
    Ok(LoopDecision {
        action: LoopAction::Retry,
        outcome: None,
        class: c.class,
        delay_ms: Some(wanted),
        from_retry_after,
        retry_after_ignored,
        retry_after_ms: from_retry_after.then_some(wanted),
        rule,
        section,
    })
}

/// [`next`], then a retry the caller's budget refuses (its `verdict`, from
/// [`crate::RetryBudget::try_retry`]) stops the loop instead, with the transient outcome and the
/// budget's rule and source; any other decision stands. The server's `retry_after_ms` is kept.
pub fn next_with_budget(
    retry_loop: &RetryLoop,
    state: &LoopState,
    attempt: &HttpAttempt,
    now_unix_ms: Option<u64>,
    random: Option<f64>,
    verdict: Option<&crate::BudgetVerdict>,
) -> Result<LoopDecision, Error> {
    let d = next(retry_loop, state, attempt, now_unix_ms, random)?;
    Ok(match verdict {
        Some(v) if d.action == LoopAction::Retry && !v.permitted => LoopDecision {
            action: LoopAction::Stop,
            outcome: Some(StepOutcome::Transient),
            delay_ms: None,
            rule: v.rule.name(),
            section: v.source,
            ..d
        },
        _ => d,
    })
}
