//! What a host tells the run machine (an attempt's [`Outcome`]) and what it answers ([`RunStep`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::breaker::{BreakerChange, BreakerVerdict};
use crate::budget::BudgetVerdict;
use crate::budgeted::BudgetedDecision;
#[cfg(feature = "http")]
use crate::http::LoopDecision;
#[cfg(feature = "mongodb")]
use crate::mongodb::errors::MongoError;
#[cfg(feature = "mongodb")]
use crate::mongodb::retry::MongoDecision;
use crate::reason::RetryReason;

/// How one attempt ended, as the host saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// The call returned what the caller wanted.
    #[serde(deserialize_with = "crate::serde_form::no_fields")]
    Success,
    /// The call failed with an error the host surfaces as it is (its classifier found no reason
    /// to retry it): the server's final answer, or a mistake of the caller's.
    #[serde(deserialize_with = "crate::serde_form::no_fields")]
    Final,
    /// The call failed for `reason`, as the host classified it (RFC 0049's vocabulary);
    /// `timeout` says it was a timeout (the AWS quota charges more to retry one).
    Reason {
        /// The reason to retry it for.
        reason: RetryReason,
        /// Whether the failure was a timeout.
        #[serde(default, deserialize_with = "crate::serde_form::or_default")]
        timeout: bool,
    },
    /// No answer: the connection failed or broke. `sent: false` only when the request surely did
    /// not leave (a refused connection, a failed DNS lookup); absent reads as maybe sent.
    Network {
        /// Whether the request may have reached the server.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sent: Option<bool>,
    },
    /// An HTTP response: its status and `Retry-After` header.
    Http {
        /// The status.
        status: u16,
        /// The `Retry-After` header, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<String>,
    },
    /// A Couchbase KV response status (classified with the policy's compat options).
    #[cfg(feature = "couchbase")]
    Kv {
        /// The status, e.g. 0x07 (a number, or a `"0x.."` string).
        #[serde(deserialize_with = "crate::serde_form::status::deserialize")]
        status: u16,
    },
    /// A MongoDB error (the `mongodb` rules only).
    #[cfg(feature = "mongodb")]
    Mongodb {
        /// The error as the driver saw it.
        error: MongoError,
    },
    /// A gRPC attempt's end (the `grpc` rules only): its status, the `grpc-retry-pushback-ms`
    /// values, whether the call was committed, how far it got.
    #[cfg(feature = "grpc")]
    Grpc {
        /// The status.
        status: crate::grpc::GrpcCode,
        /// The values of `grpc-retry-pushback-ms`, in order.
        #[serde(
            default,
            skip_serializing_if = "Vec::is_empty",
            deserialize_with = "crate::serde_form::or_default"
        )]
        pushback: Vec<String>,
        /// Whether response headers arrived (or the retry buffer overflowed).
        #[serde(default, deserialize_with = "crate::serde_form::or_default")]
        committed: bool,
        /// How far the attempt got.
        #[serde(default, deserialize_with = "crate::serde_form::or_default")]
        reach: crate::grpc::AttemptReach,
    },
    /// What an AWS attempt produced (the `aws` rules only).
    #[cfg(feature = "aws")]
    Aws {
        /// The error, as the host read it.
        error: crate::aws::AwsError,
    },
    /// The attempt reached the time bound its `send` step gave (`timeout_ms`), or the host's own.
    #[serde(deserialize_with = "crate::serde_form::no_fields")]
    Timeout,
}

impl Outcome {
    /// The stable snake_case name of the outcome's kind.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Final => "final",
            Outcome::Reason { .. } => "reason",
            Outcome::Network { .. } => "network",
            Outcome::Http { .. } => "http",
            #[cfg(feature = "couchbase")]
            Outcome::Kv { .. } => "kv",
            #[cfg(feature = "mongodb")]
            Outcome::Mongodb { .. } => "mongodb",
            #[cfg(feature = "grpc")]
            Outcome::Grpc { .. } => "grpc",
            #[cfg(feature = "aws")]
            Outcome::Aws { .. } => "aws",
            Outcome::Timeout => "timeout",
        }
    }
}

/// What the host does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunAction {
    /// Send attempt `attempt` now, ending it after `timeout_ms` at the latest; then call
    /// [`super::Run::attempt_ended`] (or [`super::Run::cancel`]).
    Send,
    /// Wait `delay_ms`, then call [`super::Run::wait_ended`].
    Wait,
    /// The run is over: see `end`.
    Done,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// An attempt succeeded: return its result.
    Succeeded,
    /// The last attempt ended in a final failure (or a final HTTP response): surface it as it is.
    Final,
    /// A retryable failure is not retried (not idempotent, a strategy declined, the attempts or the
    /// budget ran out, the breaker stayed open): surface the last failure with the decision.
    GaveUp,
    /// No time is left for another attempt: raise the host's timeout error, caused by the last failure.
    TimedOut,
    /// The host cancelled the run.
    Cancelled,
}

impl RunEnd {
    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            RunEnd::Succeeded => "succeeded",
            RunEnd::Final => "final",
            RunEnd::GaveUp => "gave_up",
            RunEnd::TimedOut => "timed_out",
            RunEnd::Cancelled => "cancelled",
        }
    }
}

/// The decision of a domain's rules behind a step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RunDecision {
    /// RFC 0049's `decide` (with the budget's verdict applied).
    Decide(BudgetedDecision),
    /// The HTTP loop's `http_next` (with the budget's verdict applied).
    #[cfg(feature = "http")]
    Http(LoopDecision),
    /// MongoDB's `decide_mongo`.
    #[cfg(feature = "mongodb")]
    Mongodb(MongoDecision),
    /// gRPC's `grpc_retry` (gRFC A6).
    #[cfg(feature = "grpc")]
    Grpc(crate::grpc::GrpcRetryDecision),
    /// The AWS SDKs' `aws_decide` (with the quota's verdict applied).
    #[cfg(feature = "aws")]
    Aws(crate::aws::AwsDecision),
}

impl RunDecision {
    /// This decision once the run stopped the retry it asked for, with `rule` and `section`: the
    /// budget refused it (`budget`, its verdict) or the run's `max_attempts` was reached. Each
    /// domain says "no retry" in its own form; RFC 0049's `decide` has no form for an attempt cap,
    /// so its decision changes only for a budget, and the HTTP loop counts the run's attempts
    /// itself. `retries` are the retries the run made.
    pub(super) fn stopped(
        self,
        rule: &'static str,
        section: &'static str,
        budget: Option<&BudgetVerdict>,
        retries: u32,
    ) -> RunDecision {
        #[cfg(not(feature = "mongodb"))]
        let _ = retries;
        #[cfg(not(any(feature = "mongodb", feature = "grpc", feature = "aws")))]
        let _ = (rule, section);
        match self {
            RunDecision::Decide(BudgetedDecision::Decided(d)) if budget.is_some() => {
                RunDecision::Decide(BudgetedDecision::apply(d, budget))
            }
            #[cfg(feature = "mongodb")]
            RunDecision::Mongodb(d) => RunDecision::Mongodb(MongoDecision {
                action: crate::mongodb::retry::MongoAction::Surface,
                delay_ms: None,
                attempts: retries,
                rule,
                section,
                ..d
            }),
            #[cfg(feature = "grpc")]
            RunDecision::Grpc(d) => RunDecision::Grpc(crate::grpc::GrpcRetryDecision {
                action: crate::grpc::GrpcAction::Fail,
                delay_ms: None,
                transparent: false,
                budget: budget.copied().or(d.budget),
                next: None,
                rule,
                section,
                ..d
            }),
            #[cfg(feature = "aws")]
            RunDecision::Aws(d) => RunDecision::Aws(d.stop(rule, section)),
            other => other,
        }
    }
}

/// The machine's answer to one event: send, wait or done, with the rule that decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunStep {
    /// Send, wait or done.
    pub action: RunAction,
    /// Send: the number of the attempt to send (the first is 1); wait: of the attempt that follows
    /// it; done: attempts sent in all (attempts the breaker kept back are not sent).
    pub attempt: u32,
    /// Send: the attempt must end within this many ms (the attempt timeout, cut to the time left);
    /// none when the run has neither.
    #[serde(with = "crate::serde_form::ms::option")]
    pub timeout_ms: Option<u64>,
    /// Wait: how long.
    #[serde(with = "crate::serde_form::ms::option")]
    pub delay_ms: Option<u64>,
    /// Done: how the run ended.
    pub end: Option<RunEnd>,
    /// The reason of the failure behind a wait or an end, when it has one.
    pub reason: Option<RetryReason>,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// Its source.
    pub section: &'static str,
    /// Time since the run started, rounded up to whole ms.
    #[serde(with = "crate::serde_form::ms")]
    pub elapsed_ms: u64,
    /// The wait a valid `Retry-After` asked for, also when it ended the run at its deadline.
    #[serde(with = "crate::serde_form::ms::option")]
    pub retry_after_ms: Option<u64>,
    /// The domain's decision behind a wait or an end after a failure.
    pub decision: Option<RunDecision>,
    /// The budget's verdict, when it was asked for this step.
    pub budget: Option<BudgetVerdict>,
    /// The breaker's verdict, when it was asked for this step.
    pub breaker: Option<BreakerVerdict>,
    /// The changes of the breaker's state this step's call made (asking it, telling it the
    /// attempt's end, or releasing a cancelled canary), in order: one state-change event each.
    pub breaker_changes: Vec<BreakerChange>,
    /// What the step is for an observer (a retry, a wait for the breaker, a give-up, or neither):
    /// what a metric or span event records it as and which runner hook fires.
    pub signal: RunSignal,
}

/// What a step is for an observer's signals (metrics, span events, logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunSignal {
    /// A wait after a failed attempt: a retry decided (a wait for the breaker's window is not).
    /// The runners' on-retry hooks fire on this signal alone.
    Retry,
    /// A wait for the breaker's window: the breaker kept the next attempt back. The runners'
    /// on-breaker-wait hooks fire on it.
    BreakerWait,
    /// The end of a run that gave up or timed out. The runners' on-give-up hooks fire on it.
    GiveUp,
    /// Anything else: a send, an end that succeeded, was final or cancelled.
    #[default]
    None,
}

impl RunSignal {
    /// What `step` is, from its action, its end and whether the breaker kept its attempt back.
    pub fn of(step: &RunStep) -> RunSignal {
        let breaker_wait = step.breaker.is_some_and(|b| !b.permitted);
        match (step.action, step.end) {
            (RunAction::Wait, _) if breaker_wait => RunSignal::BreakerWait,
            (RunAction::Wait, _) => RunSignal::Retry,
            (RunAction::Done, Some(RunEnd::GaveUp | RunEnd::TimedOut)) => RunSignal::GiveUp,
            _ => RunSignal::None,
        }
    }

    /// The stable snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            RunSignal::Retry => "retry",
            RunSignal::BreakerWait => "breaker_wait",
            RunSignal::GiveUp => "give_up",
            RunSignal::None => "none",
        }
    }
}

/// What a run did so far, for the host's statistics and its give-up error (tenacity keeps the
/// like per call): counts, time, and the last step's rule and verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RunStats {
    /// Attempts sent.
    pub attempts: u32,
    /// Waits the rules asked for after a failed attempt (retries decided).
    pub retries: u32,
    /// All the waiting asked for (retries' and the breaker's), in ms.
    #[serde(with = "crate::serde_form::ms")]
    pub waited_ms: u64,
    /// Time since the run started at its last event, rounded up to whole ms.
    #[serde(with = "crate::serde_form::ms")]
    pub elapsed_ms: u64,
    /// Retries the budget refused (each ends the run).
    pub budget_refusals: u32,
    /// Attempts the breaker kept back (each a wait for its window, or the end).
    pub breaker_rejections: u32,
    /// How the run ended, once it has.
    pub end: Option<RunEnd>,
    /// The rule of the last step.
    pub last_rule: Option<&'static str>,
    /// The reason of the last step that had one.
    pub last_reason: Option<RetryReason>,
    /// The budget's last verdict in this run.
    pub last_budget: Option<BudgetVerdict>,
    /// The breaker's last verdict in this run.
    pub last_breaker: Option<BreakerVerdict>,
}

impl RunStats {
    /// Adds what `step` did.
    pub(super) fn note(&mut self, step: &RunStep) {
        if let Some(d) = step.delay_ms {
            self.waited_ms = self.waited_ms.saturating_add(d);
        }
        if let Some(b) = step.budget {
            self.budget_refusals += u32::from(!b.permitted);
            self.last_budget = Some(b);
        }
        if let Some(b) = step.breaker {
            self.breaker_rejections += u32::from(!b.permitted);
            self.last_breaker = Some(b);
        }
        if step.signal == RunSignal::Retry {
            self.retries = self.retries.saturating_add(1);
        }
        self.elapsed_ms = step.elapsed_ms;
        self.end = step.end;
        self.last_rule = Some(step.rule);
        self.last_reason = step.reason.or(self.last_reason);
    }

    /// The statistics as a JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("statistics always serialize"))
    }
}

impl RunStep {
    /// The step as a JSON object.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| unreachable!("a step always serializes"))
    }
}

impl fmt::Display for RunStep {
    /// One log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action {
            RunAction::Send => write!(f, "send attempt {}", self.attempt)?,
            RunAction::Wait => write!(
                f,
                "wait {} ms, then send attempt {}",
                self.delay_ms.unwrap_or(0),
                self.attempt
            )?,
            RunAction::Done => write!(
                f,
                "done after {} attempts: {}",
                self.attempt,
                self.end.map_or("", RunEnd::name)
            )?,
        }
        if let Some(r) = self.reason {
            write!(f, " (reason {r})")?;
        }
        write!(f, " [rule {}; {}]", self.rule, self.section)
    }
}
