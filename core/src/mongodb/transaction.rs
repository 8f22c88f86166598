//! Transactions: the error labels a driver adds inside a transaction, and `withTransaction`
//! (`transactions-convenient-api.md`) as a pure state machine `step(state, event) -> (state, action)`.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::errors::{
    FailureKind, MongoError, RETRYABLE_WRITE_ERROR, TRANSIENT_TRANSACTION_ERROR,
    UNKNOWN_TRANSACTION_COMMIT_RESULT,
};
use super::{
    WITH_TXN_BACKOFF_SECTION, WITH_TXN_MAX_TIME_SECTION, WITH_TXN_SECTION, WITH_TXN_TIMEOUT_SECTION,
};
use crate::backoff::check_draw;
use crate::error::Error;

/// `transactions-convenient-api.md` "ClientSession.withTransaction": the limit when timeoutMS is unset.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// "Sequence of Actions" step 2.3: `BACKOFF_INITIAL` is 5 ms.
pub const BACKOFF_INITIAL_MS: u64 = 5;
/// "Sequence of Actions" step 2.4: `BACKOFF_MAX` is 500 ms.
pub const BACKOFF_MAX_MS: u64 = 500;
/// "Sequence of Actions" step 2: the backoff grows by 1.5 per transaction attempt.
pub const BACKOFF_GROWTH: f64 = 1.5;

/// `transactions.md` "UnknownTransactionCommitResult": write concern errors that are NOT labelled
/// UnknownTransactionCommitResult (the write concern itself is invalid): 100
/// UnsatisfiableWriteConcern (CannotSatisfyWriteConcern) and 79 UnknownReplWriteConcern.
pub const INVALID_WRITE_CONCERN_CODES: [i32; 2] = [100, 79];

/// Which command of a transaction failed, for the labelling rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionCommand {
    /// `commitTransaction`.
    Commit,
    /// `abortTransaction` (its errors are never reported to the application).
    Abort,
    /// Any other command inside the transaction.
    Other,
}

/// The labels of an error raised inside a transaction (`transactions.md`, "Transient Transaction
/// Error" and "UnknownTransactionCommitResult"): the labels it already has (the server's, and
/// RetryableWriteError for commit/abort), plus TransientTransactionError for a network or server
/// selection error on any command but commit and for PoolClearedError, plus
/// UnknownTransactionCommitResult on a commit that failed with a server selection error, a network
/// error, a retryable write error, MaxTimeMSExpired, or a write concern error other than 100 / 79.
/// A network error in the handshake counts as a network error (`transactions.md`, commitTransaction:
/// "including a handshake network error"); a handshake reply with a code, as a server reply.
pub fn transaction_error_labels(command: TransactionCommand, error: &MongoError) -> Vec<String> {
    let mut e = error.clone();
    let network_or_selection = error.is_network_error() || error.kind == FailureKind::ServerSelection;
    let transient = error.kind == FailureKind::PoolCleared
        || (network_or_selection && command != TransactionCommand::Commit);
    if transient {
        e.add_label(TRANSIENT_TRANSACTION_ERROR);
    }
    if command == TransactionCommand::Commit {
        let unknown = network_or_selection
            || e.has_label(RETRYABLE_WRITE_ERROR)
            || e.is_max_time_ms_expired()
            || e.write_concern_code
                .is_some_and(|c| !INVALID_WRITE_CONCERN_CODES.contains(&c));
        if unknown {
            e.add_label(UNKNOWN_TRANSACTION_COMMIT_RESULT);
        }
    }
    e.labels
}

/// The backoff before transaction attempt `transaction_attempt + 1` ("Sequence of Actions" step 2):
/// `floor(random × min(5 × 1.5^transaction_attempt, 500))` ms, with `random` in `[0, 1)`.
pub fn transaction_backoff_ms(transaction_attempt: u32, random: f64) -> Result<u64, Error> {
    let r = check_draw("random", random)?;
    Ok((transaction_backoff_ceiling(transaction_attempt) * r).floor() as u64)
}

/// `min(5 × 1.5^transaction_attempt, 500)`, the un-jittered backoff (7.5 ms for attempt 1).
pub fn transaction_backoff_ceiling(transaction_attempt: u32) -> f64 {
    let exp = i32::try_from(transaction_attempt).unwrap_or(i32::MAX);
    (BACKOFF_INITIAL_MS as f64 * BACKOFF_GROWTH.powi(exp)).min(BACKOFF_MAX_MS as f64)
}

/// The session's transaction state (`transactions.md`, "ClientSession changes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// No transaction.
    NoTransaction,
    /// Started, no command sent yet.
    Starting,
    /// At least one command sent.
    InProgress,
    /// Committed (also after a failed commit).
    Committed,
    /// Aborted.
    Aborted,
}

impl SessionState {
    /// Whether an abort must be sent before leaving the callback (starting or in progress).
    pub fn active(self) -> bool {
        matches!(self, SessionState::Starting | SessionState::InProgress)
    }
}

/// Where `withTransaction` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Nothing happened yet: the next event is `begin`.
    NotStarted,
    /// A transaction was started and the callback is running.
    InCallback,
    /// commitTransaction is running.
    Committing,
    /// Returned or raised: no further events.
    Done,
}

/// The state of one `withTransaction` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransactionState {
    /// The limit on retrying: timeoutMS when given, else 120 000 ms.
    #[serde(with = "crate::serde_form::ms")]
    pub timeout_ms: u64,
    /// Whether the limit is a CSOT timeoutMS (the timeout error is then a CSOT timeout error).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub csot: bool,
    /// Transactions started so far (`transactionAttempt`).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub transaction_attempt: u32,
    /// Where the call is.
    pub phase: Phase,
}

impl TransactionState {
    /// A fresh call with timeoutMS `timeout_ms`, or the 120 s default when `None`.
    pub fn new(timeout_ms: Option<u64>) -> TransactionState {
        TransactionState {
            timeout_ms: timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
            csot: timeout_ms.is_some(),
            transaction_attempt: 0,
            phase: Phase::NotStarted,
        }
    }
}

/// What the host reports to the state machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum TransactionEvent {
    /// withTransaction was called.
    #[serde(deserialize_with = "crate::serde_form::no_fields")]
    Begin,
    /// startTransaction raised (e.g. a transaction is already in progress).
    StartFailed {
        /// The error, propagated as is.
        error: MongoError,
    },
    /// The callback returned normally.
    CallbackReturned {
        /// The session's transaction state afterwards.
        session: SessionState,
    },
    /// The callback raised an error.
    CallbackRaised {
        /// The session's transaction state when it raised.
        session: SessionState,
        /// The error, with its labels.
        error: MongoError,
        /// Monotonic time since withTransaction began, in ms.
        #[serde(with = "crate::serde_form::ms")]
        elapsed_ms: u64,
        /// The jitter draw in `[0, 1)` for the backoff (needed when the error is transient).
        #[serde(default, deserialize_with = "crate::serde_form::draw::deserialize")]
        random: Option<f64>,
    },
    /// commitTransaction succeeded.
    #[serde(deserialize_with = "crate::serde_form::no_fields")]
    CommitSucceeded,
    /// commitTransaction raised an error (after its own internal retry).
    CommitFailed {
        /// The error: code, labels and writeConcernError code.
        error: MongoError,
        /// Monotonic time since withTransaction began, in ms.
        #[serde(with = "crate::serde_form::ms")]
        elapsed_ms: u64,
        /// The jitter draw in `[0, 1)` for the backoff (needed when the error is transient).
        #[serde(default, deserialize_with = "crate::serde_form::draw::deserialize")]
        random: Option<f64>,
    },
}

impl TransactionEvent {
    /// The event's name, as in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            TransactionEvent::Begin => "begin",
            TransactionEvent::StartFailed { .. } => "start_failed",
            TransactionEvent::CallbackReturned { .. } => "callback_returned",
            TransactionEvent::CallbackRaised { .. } => "callback_raised",
            TransactionEvent::CommitSucceeded => "commit_succeeded",
            TransactionEvent::CommitFailed { .. } => "commit_failed",
        }
    }
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum TransactionAction {
    /// Start a transaction, then invoke the callback.
    StartTransaction,
    /// Invoke commitTransaction.
    Commit,
    /// Invoke commitTransaction again (the session applies `w: "majority"`).
    RetryCommit {
        /// The rule that decided.
        rule: &'static str,
        /// Its spec section.
        section: &'static str,
    },
    /// Abort first when `abort_first`, sleep `backoff_ms`, then start a transaction and invoke the callback.
    RetryTransaction {
        /// Whether to call abortTransaction first (the session was starting or in progress).
        abort_first: bool,
        /// The backoff before starting again.
        backoff_ms: u64,
        /// The rule that decided.
        rule: &'static str,
        /// Its spec section.
        section: &'static str,
    },
    /// Abort first when `abort_first`, then propagate `error` as is.
    Raise {
        /// Whether to call abortTransaction first.
        abort_first: bool,
        /// The error to propagate.
        error: MongoError,
        /// The rule that decided.
        rule: &'static str,
        /// Its spec section.
        section: &'static str,
    },
    /// Abort first when `abort_first`, then raise a timeout error wrapping `cause`, with its labels.
    RaiseTimeout {
        /// Whether to call abortTransaction first.
        abort_first: bool,
        /// The labels copied from the last error.
        labels: Vec<String>,
        /// A CSOT timeout error (timeoutMS was set) rather than the legacy one.
        csot: bool,
        /// The last error, exposed by the timeout error.
        cause: MongoError,
        /// The rule that decided.
        rule: &'static str,
        /// Its spec section.
        section: &'static str,
    },
    /// The transaction committed (or the callback ended it): return.
    Return,
}

impl TransactionAction {
    /// The action's name, as in JSON.
    pub fn name(&self) -> &'static str {
        match self {
            TransactionAction::StartTransaction => "start_transaction",
            TransactionAction::Commit => "commit",
            TransactionAction::RetryCommit { .. } => "retry_commit",
            TransactionAction::RetryTransaction { .. } => "retry_transaction",
            TransactionAction::Raise { .. } => "raise",
            TransactionAction::RaiseTimeout { .. } => "raise_timeout",
            TransactionAction::Return => "return",
        }
    }
}

impl fmt::Display for TransactionAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransactionAction::RetryTransaction {
                abort_first,
                backoff_ms,
                ..
            } => write!(
                f,
                "{}retry the transaction after {backoff_ms} ms",
                if *abort_first { "abort, then " } else { "" }
            ),
            other => f.write_str(other.name()),
        }
    }
}

fn unexpected(state: &TransactionState, event: &TransactionEvent) -> Error {
    let expected = match state.phase {
        Phase::NotStarted => "begin",
        Phase::InCallback => "start_failed, callback_returned, callback_raised",
        Phase::Committing => "commit_succeeded, commit_failed",
        Phase::Done => "nothing: withTransaction has finished",
    };
    Error::UnknownName {
        field: "event".to_owned(),
        value: event.name().to_owned(),
        expected: expected.to_owned(),
    }
}

/// One transition of `withTransaction` (`transactions-convenient-api.md`, "Sequence of Actions"
/// and "Pseudo-code"); an event the phase does not expect is an `unknown_name` error on `event`.
pub fn step(
    state: &TransactionState,
    event: &TransactionEvent,
) -> Result<(TransactionState, TransactionAction), Error> {
    let mut next = state.clone();
    let timeout_error = |next: &mut TransactionState, abort_first: bool, cause: &MongoError| {
        next.phase = Phase::Done;
        TransactionAction::RaiseTimeout {
            abort_first,
            labels: cause.labels.clone(),
            csot: state.csot,
            cause: cause.clone(),
            rule: "retry_timeout_exceeded",
            section: WITH_TXN_TIMEOUT_SECTION,
        }
    };
    // Step 2: back off before the next transaction attempt, unless that would reach the limit.
    let retry_transaction = |next: &mut TransactionState,
                             abort_first: bool,
                             cause: &MongoError,
                             elapsed_ms: u64,
                             random: Option<f64>|
     -> Result<TransactionAction, Error> {
        let r = random.ok_or_else(|| Error::MissingField {
            field: "event.random".to_owned(),
        })?;
        let backoff_ms = transaction_backoff_ms(state.transaction_attempt, r)?;
        if elapsed_ms.saturating_add(backoff_ms) >= state.timeout_ms {
            return Ok(timeout_error(next, abort_first, cause));
        }
        next.phase = Phase::InCallback;
        next.transaction_attempt = state.transaction_attempt.saturating_add(1);
        Ok(TransactionAction::RetryTransaction {
            abort_first,
            backoff_ms,
            rule: "transient_transaction_error",
            section: WITH_TXN_BACKOFF_SECTION,
        })
    };
    let action = match (state.phase, event) {
        (Phase::NotStarted, TransactionEvent::Begin) => {
            next.phase = Phase::InCallback;
            next.transaction_attempt = state.transaction_attempt.saturating_add(1);
            TransactionAction::StartTransaction
        }
        (Phase::InCallback, TransactionEvent::StartFailed { error }) => {
            next.phase = Phase::Done;
            TransactionAction::Raise {
                abort_first: false,
                error: error.clone(),
                rule: "start_transaction_failed",
                section: WITH_TXN_SECTION,
            }
        }
        (Phase::InCallback, TransactionEvent::CallbackReturned { session }) => {
            if session.active() {
                next.phase = Phase::Committing;
                TransactionAction::Commit
            } else {
                next.phase = Phase::Done;
                TransactionAction::Return
            }
        }
        (
            Phase::InCallback,
            TransactionEvent::CallbackRaised {
                session,
                error,
                elapsed_ms,
                random,
            },
        ) => {
            let abort_first = session.active();
            if error.has_label(TRANSIENT_TRANSACTION_ERROR) {
                if *elapsed_ms >= state.timeout_ms {
                    timeout_error(&mut next, abort_first, error)
                } else {
                    retry_transaction(&mut next, abort_first, error, *elapsed_ms, *random)?
                }
            } else {
                next.phase = Phase::Done;
                let rule = if error.has_label(UNKNOWN_TRANSACTION_COMMIT_RESULT) {
                    "callback_committed_unknown_result"
                } else {
                    "callback_error_not_transient"
                };
                TransactionAction::Raise {
                    abort_first,
                    error: error.clone(),
                    rule,
                    section: WITH_TXN_SECTION,
                }
            }
        }
        (Phase::Committing, TransactionEvent::CommitSucceeded) => {
            next.phase = Phase::Done;
            TransactionAction::Return
        }
        (
            Phase::Committing,
            TransactionEvent::CommitFailed {
                error,
                elapsed_ms,
                random,
            },
        ) => {
            let max_time = error.is_max_time_ms_expired();
            if !max_time && error.has_label(UNKNOWN_TRANSACTION_COMMIT_RESULT) {
                if *elapsed_ms >= state.timeout_ms {
                    timeout_error(&mut next, false, error)
                } else {
                    TransactionAction::RetryCommit {
                        rule: "unknown_commit_result",
                        section: WITH_TXN_SECTION,
                    }
                }
            } else if error.has_label(TRANSIENT_TRANSACTION_ERROR) {
                retry_transaction(&mut next, false, error, *elapsed_ms, *random)?
            } else {
                next.phase = Phase::Done;
                let (rule, section) = if max_time && error.has_label(UNKNOWN_TRANSACTION_COMMIT_RESULT) {
                    ("max_time_ms_expired_not_retried", WITH_TXN_MAX_TIME_SECTION)
                } else {
                    ("commit_error_not_retryable", WITH_TXN_SECTION)
                };
                TransactionAction::Raise {
                    abort_first: false,
                    error: error.clone(),
                    rule,
                    section,
                }
            }
        }
        _ => return Err(unexpected(state, event)),
    };
    Ok((next, action))
}

/// Runs `events` from a fresh call with `timeout_ms` (None: 120 s) and returns every action
/// and the final state.
pub fn run_transaction(
    timeout_ms: Option<u64>,
    events: &[TransactionEvent],
) -> Result<(Vec<TransactionAction>, TransactionState), Error> {
    let mut state = TransactionState::new(timeout_ms);
    let mut actions = Vec::with_capacity(events.len());
    for (i, event) in events.iter().enumerate() {
        let (next, action) = step(&state, event).map_err(|e| match e {
            Error::UnknownName { value, expected, .. } => Error::UnknownName {
                field: format!("events[{i}]"),
                value,
                expected,
            },
            other => other,
        })?;
        state = next;
        actions.push(action);
    }
    Ok((actions, state))
}
