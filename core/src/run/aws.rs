//! The run machine's AWS rules: the SDKs' retry modes ([`crate::aws::aws_decide`]) deciding each
//! failed attempt. The run's budget is the retry quota (a `retry_quota` budget): it is charged the
//! decision's cause before each retry, and a refusal ends the run with the quota's rule (the 2026
//! behaviour's wait before a refused long-polling call returns is in the step's decision,
//! `wait_ms`; the run does not wait it). Adaptive mode's rate limiter is the host's, asked before
//! each send ([`crate::aws::AdaptiveRateLimiter`]).

use serde::{Deserialize, Serialize};

use super::{not_for, Clock, Judged, Outcome, Run, RunDecision, RunEnd, Verdict};
use crate::aws::{aws_decide, AwsAction, AwsError, AwsRetryConfig, AwsRetryDocument};
use crate::budget::BudgetVerdict;
use crate::error::Error;

/// The AWS SDKs' rules for a run: the retry configuration (mode, behaviour, attempts, service).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AwsRules {
    /// The retry configuration; absent: standard mode, classic behaviour, 3 attempts.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub config: AwsRetryDocument,
}

impl AwsRules {
    /// The configuration, validated (errors name `rules.aws.config.<field>`).
    pub fn validate(&self) -> Result<AwsRetryConfig, Error> {
        AwsRetryConfig::from_document(&self.config, "rules.aws.config")
    }
}

impl Run {
    pub(super) fn judge_aws(
        &mut self,
        rules: &AwsRules,
        outcome: &Outcome,
        clock: Clock,
        verdict: Option<&BudgetVerdict>,
    ) -> Result<(Judged, Verdict), Error> {
        let error = match outcome {
            Outcome::Aws { error } => error.clone(),
            Outcome::Network { .. } => AwsError {
                connection_error: Some(true),
                ..AwsError::default()
            },
            Outcome::Timeout => AwsError {
                timeout: Some(true),
                ..AwsError::default()
            },
            Outcome::Http {
                status,
                retry_after: _,
            } => AwsError {
                status: Some(*status),
                ..AwsError::default()
            },
            other => return Err(not_for("outcome.kind", other.kind_name(), "an aws run")),
        };
        let config = rules.validate()?;
        let d = aws_decide(&config, self.sent.max(1), &error, clock.random, verdict).map_err(|e| match e
            .field()
            .strip_prefix("error")
        {
            Some(rest) => {
                let field = format!("outcome.error{rest}");
                e.with_field(&field)
            }
            None => e,
        })?;
        let judged = match d.cause {
            Some(cause) => Judged::Failure(cause),
            None => Judged::Final,
        };
        let end = if judged == Judged::Final {
            RunEnd::Final
        } else {
            RunEnd::GaveUp
        };
        let v = Verdict {
            delay_ms: (d.action == AwsAction::Retry).then(|| d.delay_ms.unwrap_or(0)),
            end,
            reason: None,
            rule: d.rule,
            section: d.section,
            retry_after_ms: d.retry_after_ms,
            decision: Some(RunDecision::Aws(d)),
        };
        Ok((judged, v))
    }
}
