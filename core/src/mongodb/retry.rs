//! Executing one MongoDB command: the unified retry loop of `client-backpressure.md`
//! ("Pseudocode") combining retryable writes, retryable reads and overload retries, as a pure
//! decision per failed attempt.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::backpressure::{is_overload_error, is_retryable_overload_error, overload_backoff_ms, MAX_RETRIES};
use super::errors::{
    is_retryable_read_error, is_retryable_write_error, retryable_write_labels, MongoError, ServerKind,
};
use super::operations::{eligibility, CommandClass, MongoOperation, OperationName};
use super::transaction::{transaction_error_labels, TransactionCommand};
use super::{BP_INTERACTION_SECTION, BP_POLICY_SECTION, RR_RETRY_FAILS_SECTION, RW_EXECUTING_SECTION};
use crate::error::Error;

fn yes() -> bool {
    true
}

/// `null` read as [`yes`]'s value, as the key left out is.
fn yes_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    crate::serde_form::or_else(d, yes)
}

fn default_max_retries() -> u32 {
    MAX_RETRIES
}

/// `null` read as [`default_max_retries`]'s value, as the key left out is.
fn default_max_retries_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    crate::serde_form::or_else(d, default_max_retries)
}

/// One MongoDB command at the moment an attempt failed: everything the next decision depends on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MongoRequest {
    /// The operation and the facts that decide its retryability.
    pub operation: MongoOperation,
    /// The client's `retryWrites` (default true).
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub retry_writes: bool,
    /// The client's `retryReads` (default true).
    #[serde(default = "yes", deserialize_with = "yes_if_null")]
    pub retry_reads: bool,
    /// Which server answered (pre-4.4 servers need the driver to add RetryableWriteError).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub server: ServerKind,
    /// `maxAdaptiveRetries` (default 2).
    #[serde(
        default = "default_max_retries",
        deserialize_with = "default_max_retries_if_null"
    )]
    pub max_adaptive_retries: u32,
    /// Retries already made for this command (0 after the first attempt failed).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub attempts: u32,
    /// Whether an earlier attempt of this command failed with an overload error.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub overloaded: bool,
    /// Time since the operation started, in milliseconds (only consulted with `timeout_ms`).
    #[serde(default, with = "crate::serde_form::ms::or_zero")]
    pub elapsed_ms: u64,
    /// The CSOT `timeoutMS`, when set: retries continue until it expires instead of once.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout_ms: Option<u64>,
    /// The caller's jitter draw in `[0, 1)`, required when the error is an overload error.
    #[serde(
        default,
        deserialize_with = "crate::serde_form::draw::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    pub random: Option<f64>,
}

impl MongoRequest {
    /// A request for `operation` after its first attempt failed, with the default client options.
    pub fn new(operation: MongoOperation) -> MongoRequest {
        MongoRequest {
            operation,
            retry_writes: true,
            retry_reads: true,
            server: ServerKind::Modern,
            max_adaptive_retries: MAX_RETRIES,
            attempts: 0,
            overloaded: false,
            elapsed_ms: 0,
            timeout_ms: None,
            random: None,
        }
    }
}

/// Retry, or surface the error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MongoAction {
    /// Send the command again after `delay_ms`.
    Retry,
    /// Stop; report the error chosen by `surfaced_write_error` / `surfaced_read_error`.
    Surface,
}

/// Which rule set made the error retryable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryableAs {
    /// A retryable write with a RetryableWriteError label.
    Write,
    /// A retryable read with a retryable error.
    Read,
    /// A retryable overload error (SystemOverloadedError + RetryableError).
    Overload,
}

/// The decision after one failed attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MongoDecision {
    /// Retry or surface.
    pub action: MongoAction,
    /// The backoff before the retry (0 unless the error is an overload error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// Retries made once this decision is followed (the caller passes it back as `attempts`).
    pub attempts: u32,
    /// Whether an overload error has now been seen (the caller passes it back as `overloaded`).
    pub overloaded: bool,
    /// The error's labels as the driver reports them (server labels plus the driver's own).
    pub labels: Vec<String>,
    /// Which rule set made the error retryable, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retryable_as: Option<RetryableAs>,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// The spec section the rule comes from.
    pub section: &'static str,
}

impl MongoDecision {
    /// Whether the command is to be sent again.
    pub fn is_retry(&self) -> bool {
        self.action == MongoAction::Retry
    }
}

impl fmt::Display for MongoDecision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action {
            MongoAction::Retry => write!(
                f,
                "retry {} after {} ms ({}, {})",
                self.attempts,
                self.delay_ms.unwrap_or(0),
                self.rule,
                self.section
            ),
            MongoAction::Surface => write!(f, "surface the error ({}, {})", self.rule, self.section),
        }
    }
}

/// The labels a driver reports for `error` on `request`'s command: the server's labels, plus
/// RetryableWriteError on writes outside a transaction (and on commit/abort), plus the
/// transaction labels (TransientTransactionError, UnknownTransactionCommitResult) inside one.
pub fn driver_labels(request: &MongoRequest, error: &MongoError) -> Vec<String> {
    let op = &request.operation;
    let txn_command = match op.name {
        OperationName::CommitTransaction => Some(TransactionCommand::Commit),
        OperationName::AbortTransaction => Some(TransactionCommand::Abort),
        _ if op.in_transaction => Some(TransactionCommand::Other),
        _ => None,
    };
    match txn_command {
        Some(TransactionCommand::Other) => transaction_error_labels(TransactionCommand::Other, error),
        Some(command) => {
            let mut e = error.clone();
            e.labels = retryable_write_labels(error, request.server, true);
            transaction_error_labels(command, &e)
        }
        None if op.class() == CommandClass::Write => {
            retryable_write_labels(error, request.server, request.retry_writes)
        }
        None => error.labels.clone(),
    }
}

/// Decides what follows a failed attempt (`client-backpressure.md` "Pseudocode"): retry only a
/// retryable write with RetryableWriteError, a retryable read with a retryable error, or a
/// retryable overload error when the client option allows; at most once without CSOT, until
/// `timeout_ms` with it, and at most `max_adaptive_retries` times once an overload error was seen;
/// back off `random × min(10 s, base × 2^attempt)` only after an overload error.
pub fn decide_mongo(request: &MongoRequest, error: &MongoError) -> Result<MongoDecision, Error> {
    if let Some(r) = request.random {
        crate::backoff::check_draw("random", r)?;
    }
    let op = &request.operation;
    let elig = eligibility(op, request.retry_writes, request.retry_reads);
    let labels = driver_labels(request, error);
    let labelled = MongoError {
        labels: labels.clone(),
        ..error.clone()
    };
    let overload = is_overload_error(&labels);
    let write_ok =
        elig.retryable_write && is_retryable_write_error(&labelled, request.server, true).retryable;
    let read_ok = elig.retryable_read && is_retryable_read_error(&labelled).retryable;
    let overload_ok = elig.overload_retry && is_retryable_overload_error(&labels);
    let surface = |rule: &'static str, section: &'static str, overloaded: bool| MongoDecision {
        action: MongoAction::Surface,
        delay_ms: None,
        attempts: request.attempts,
        overloaded,
        labels: labels.clone(),
        retryable_as: None,
        rule,
        section,
    };
    let retryable_as = if write_ok {
        RetryableAs::Write
    } else if read_ok {
        RetryableAs::Read
    } else if overload_ok {
        RetryableAs::Overload
    } else {
        let (rule, section) = if is_retryable_overload_error(&labels) && !elig.overload_retry {
            ("overload_retry_disabled", BP_POLICY_SECTION)
        } else if elig.retryable_write {
            let v = is_retryable_write_error(&labelled, request.server, true);
            (v.rule, v.section)
        } else if elig.retryable_read {
            let v = is_retryable_read_error(&labelled);
            (v.rule, v.section)
        } else {
            (elig.rule, elig.section)
        };
        return Ok(surface(rule, section, request.overloaded || overload));
    };
    let attempt = request.attempts.saturating_add(1);
    let overloaded = request.overloaded || overload;
    let allowed = if overloaded {
        request.max_adaptive_retries
    } else if request.timeout_ms.is_some() {
        u32::MAX
    } else {
        1
    };
    if attempt > allowed {
        let (rule, section) = if overloaded {
            ("max_adaptive_retries_reached", BP_INTERACTION_SECTION)
        } else if elig.class == CommandClass::Read {
            ("retried_once", RR_RETRY_FAILS_SECTION)
        } else {
            ("retried_once", RW_EXECUTING_SECTION)
        };
        return Ok(surface(rule, section, overloaded));
    }
    if let Some(timeout) = request.timeout_ms {
        if request.elapsed_ms >= timeout {
            let section = if elig.class == CommandClass::Read {
                RR_RETRY_FAILS_SECTION
            } else {
                RW_EXECUTING_SECTION
            };
            return Ok(surface("timeout_expired", section, overloaded));
        }
    }
    let delay_ms = if overload {
        let r = request.random.ok_or_else(|| Error::MissingField {
            field: "random".to_owned(),
        })?;
        let d = overload_backoff_ms(attempt, error.base_backoff_ms, r)?;
        if let Some(timeout) = request.timeout_ms {
            if request.elapsed_ms.saturating_add(d) > timeout {
                return Ok(surface("backoff_past_deadline", BP_POLICY_SECTION, overloaded));
            }
        }
        d
    } else {
        0
    };
    let (rule, section) = match (retryable_as, overload) {
        (_, true) => ("overload_backoff", BP_POLICY_SECTION),
        (RetryableAs::Write, false) => ("retryable_write_error", RW_EXECUTING_SECTION),
        (RetryableAs::Read, false) => ("retryable_read_error", RR_RETRY_FAILS_SECTION),
        (RetryableAs::Overload, false) => ("overload_retry", BP_POLICY_SECTION),
    };
    Ok(MongoDecision {
        action: MongoAction::Retry,
        delay_ms: Some(delay_ms),
        attempts: attempt,
        overloaded,
        labels,
        retryable_as: Some(retryable_as),
        rule,
        section,
    })
}
