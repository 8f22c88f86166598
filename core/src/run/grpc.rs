//! The run machine's gRPC rules: gRFC A6's retry policy ([`crate::grpc::grpc_retry`]) deciding each
//! attempt of a retried call. Hedging keeps several attempts out at once, so it is its own machine
//! ([`crate::grpc::grpc_hedge`]), not a run's rules.
//!
//! How the run counts an attempt for a shared budget and breaker, as A6 counts it for throttling:
//! a retryable status and pushback not to retry are failures; OK a success; a committed call, a
//! status the policy does not retry and a call with no policy are the server's final answer (the
//! breaker's success, nothing for the budget: A6's bucket counts only OK and retryable failures); a
//! transparent retry (the server's application never saw the attempt) is neither. A run's
//! `max_attempts` caps the attempts it sends as in every run, transparent resends included, so a
//! run with a cap and no deadline ends; the policy's `maxAttempts` (after the client's cap) is A6's,
//! and transparent retries do not count toward it. With neither bound, grpc-java's
//! [`crate::grpc::MAX_TRANSPARENT_RETRIES`] ends a call whose attempts never leave the client.

use serde::{Deserialize, Serialize};

use super::{not_for, Clock, Judged, Outcome, Run, RunDecision, RunEnd, Verdict};
use crate::budget::RetryCause;
use crate::error::Error;
use crate::grpc::{
    grpc_retry, AttemptReach, ClientOptions, GrpcAction, GrpcAttempt, GrpcCode, GrpcJitter, GrpcRetryState,
    RetryPolicy, RetryPolicyDocument, ThrottleEvent, DEFAULT_MAX_ATTEMPTS_CAP,
};

/// gRPC's rules for a run: the method's retry policy as gRPC's service config writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcRules {
    /// The method's `retryPolicy` (camelCase, gRPC's JSON); absent: only transparent retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<RetryPolicyDocument>,
    /// The client's cap on `maxAttempts` (A6: 5 unless the client changes it).
    #[serde(default = "default_cap", deserialize_with = "default_cap_if_null")]
    pub max_attempts_cap: u32,
    /// How the backoff is jittered (A6's ±20 % by default; `full`: its text before 2024-08-29).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub jitter: GrpcJitter,
}

fn default_cap() -> u32 {
    DEFAULT_MAX_ATTEMPTS_CAP
}

/// `null` read as [`default_cap`]'s value, as the key left out is.
fn default_cap_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    crate::serde_form::or_else(d, default_cap)
}

impl GrpcRules {
    /// The policy, validated (errors name `rules.grpc.retry_policy.<field>`).
    pub fn validate(&self) -> Result<Option<RetryPolicy>, Error> {
        let options = ClientOptions::with_cap(self.max_attempts_cap, "rules.grpc.max_attempts_cap")?;
        self.retry_policy
            .as_ref()
            .map(|p| p.validate("rules.grpc.retry_policy", &options))
            .transpose()
    }
}

impl Run {
    pub(super) fn judge_grpc(
        &mut self,
        rules: &GrpcRules,
        outcome: &Outcome,
        clock: Clock,
    ) -> Result<(Judged, Verdict), Error> {
        let (attempt, timeout) = match outcome {
            Outcome::Grpc {
                status,
                pushback,
                committed,
                reach,
            } => (
                GrpcAttempt {
                    status: *status,
                    pushback: pushback.clone(),
                    committed: *committed,
                    reach: *reach,
                },
                false,
            ),
            // A connection that failed before the request left is a transparent retry's case.
            Outcome::Network { sent } => (
                GrpcAttempt {
                    status: GrpcCode::Unavailable,
                    pushback: Vec::new(),
                    committed: false,
                    reach: if *sent == Some(false) {
                        AttemptReach::NeverSent
                    } else {
                        AttemptReach::Processed
                    },
                },
                false,
            ),
            Outcome::Timeout => (
                GrpcAttempt {
                    status: GrpcCode::DeadlineExceeded,
                    pushback: Vec::new(),
                    committed: false,
                    reach: AttemptReach::Processed,
                },
                true,
            ),
            other => return Err(not_for("outcome.kind", other.kind_name(), "a grpc run")),
        };
        let policy = rules.validate()?;
        let state = GrpcRetryState {
            attempts: self.sent.saturating_sub(self.transparent).max(1),
            retries: self.sent.saturating_sub(1),
            retries_since_pushback: self.since_pushback,
            elapsed_ms: self.elapsed_ms(),
            deadline_ms: self.config.timeout_ms,
        };
        let d = grpc_retry(
            policy.as_ref(),
            &state,
            &attempt,
            clock.random,
            rules.jitter,
            None,
        )
        .map_err(|e| {
            if e.field() == "random" {
                e
            } else {
                e.with_field("outcome")
            }
        })?;
        let cause = if timeout {
            RetryCause::Timeout
        } else {
            RetryCause::Error
        };
        // A network failure or a timeout is no answer from the server: a failure for the breaker
        // and the budget even when the policy does not retry it.
        let answered = matches!(outcome, Outcome::Grpc { .. });
        let judged = match (d.action, d.transparent, d.throttle) {
            (GrpcAction::Succeeded, _, _) => Judged::Success,
            (GrpcAction::Retry, true, _) => Judged::Uncounted,
            (_, _, Some(ThrottleEvent::Failure)) => Judged::Failure(cause),
            // An attempt that never left the client, not resent (the deadline, grpc-java's bound).
            (_, _, _) if d.rule == "deadline_reached" || d.rule == "transparent_retries_exhausted" => {
                Judged::Uncounted
            }
            _ if !answered => Judged::Failure(cause),
            _ => Judged::Answered,
        };
        let end = match d.rule {
            _ if d.action == GrpcAction::Succeeded => RunEnd::Succeeded,
            "deadline_reached" | "deadline_before_retry" => RunEnd::TimedOut,
            _ if judged == Judged::Answered => RunEnd::Final,
            _ if timeout && d.action == GrpcAction::Fail => RunEnd::TimedOut,
            _ => RunEnd::GaveUp,
        };
        if let Some(next) = d.next {
            if d.transparent {
                self.transparent = self.transparent.saturating_add(1);
            }
            self.since_pushback = next.retries_since_pushback;
        }
        let v = Verdict {
            delay_ms: d.delay_ms.filter(|_| d.action == GrpcAction::Retry),
            end,
            reason: None,
            rule: d.rule,
            section: d.section,
            retry_after_ms: d.pushback_ms,
            decision: Some(RunDecision::Grpc(d)),
        };
        Ok((judged, v))
    }
}
