//! MongoDB errors: labels, the retryable code list, network / state-change / command
//! classification, the retryable write and read error rules, and which error surfaces
//! when several attempts failed (the `NoWritesPerformed` rules).

use serde::{Deserialize, Serialize};

use super::{RR_ERROR_SECTION, RR_RETRY_FAILS_SECTION, RW_EXECUTING_SECTION, RW_LABELS_SECTION};
use crate::error::Error;

/// Label: the write may be retried (`retryable-writes.md`, RetryableWriteError Labels).
pub const RETRYABLE_WRITE_ERROR: &str = "RetryableWriteError";
/// Label: the whole transaction may be retried (`transactions.md`, Transient Transaction Error).
pub const TRANSIENT_TRANSACTION_ERROR: &str = "TransientTransactionError";
/// Label: the commit outcome is unknown; commit may be called again (`transactions.md`).
pub const UNKNOWN_TRANSACTION_COMMIT_RESULT: &str = "UnknownTransactionCommitResult";
/// Label: the server performed no write (`retryable-writes.md`, Executing Retryable Write Commands).
pub const NO_WRITES_PERFORMED: &str = "NoWritesPerformed";
/// Label: safely retryable regardless of command type (`client-backpressure.md`, RetryableError label).
pub const RETRYABLE_ERROR: &str = "RetryableError";
/// Label: the server is overloaded; back off (`client-backpressure.md`, SystemOverloadedError label).
pub const SYSTEM_OVERLOADED_ERROR: &str = "SystemOverloadedError";

/// MaxTimeMSExpired: never commit-retried by withTransaction.
pub const MAX_TIME_MS_EXPIRED: i32 = 50;
/// DuplicateKey (E11000).
pub const DUPLICATE_KEY: i32 = 11000;
/// IllegalOperation: with "Transaction numbers" the deployment lacks retryable writes.
pub const ILLEGAL_OPERATION: i32 = 20;
/// The message drivers raise instead of IllegalOperation "Transaction numbers ..." (prose test 1).
pub const UNSUPPORTED_DEPLOYMENT_MESSAGE: &str =
    "This MongoDB deployment does not support retryable writes. \
     Please add retryWrites=false to your connection string.";

/// Why a code is on the retryable list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CodeGroup {
    /// "not writable primary" / "node is recovering": the topology changed (SDAM).
    StateChange,
    /// A mongos could not reach a shard ("What do the additional error codes mean?").
    Routing,
    /// Anything else on the list (time limit, read concern not yet available).
    Other,
}

/// One row of the retryable code table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CodeRow {
    /// The server error code.
    pub code: i32,
    /// The server's codeName.
    pub name: &'static str,
    /// Why it is on the list.
    pub group: CodeGroup,
    /// On the retryable-writes list (pre-4.4 servers: the driver adds RetryableWriteError).
    pub writes: bool,
    /// On the retryable-reads list.
    pub reads: bool,
}

const fn row(code: i32, name: &'static str, group: CodeGroup, writes: bool, reads: bool) -> CodeRow {
    CodeRow {
        code,
        name,
        group,
        writes,
        reads,
    }
}

/// The retryable codes: `retryable-writes.md` "RetryableWriteError Labels" (the 12 write codes)
/// and `retryable-reads.md` "Retryable Error" (the same plus 134). Grouping: `retryable-writes.md`
/// "What do the additional error codes mean?" (routing) and SDAM's not-primary/recovering codes.
pub const RETRYABLE_CODES: [CodeRow; 13] = [
    row(11600, "InterruptedAtShutdown", CodeGroup::StateChange, true, true),
    row(
        11602,
        "InterruptedDueToReplStateChange",
        CodeGroup::StateChange,
        true,
        true,
    ),
    row(10107, "NotWritablePrimary", CodeGroup::StateChange, true, true),
    row(
        13435,
        "NotPrimaryNoSecondaryOk",
        CodeGroup::StateChange,
        true,
        true,
    ),
    row(13436, "NotPrimaryOrSecondary", CodeGroup::StateChange, true, true),
    row(189, "PrimarySteppedDown", CodeGroup::StateChange, true, true),
    row(91, "ShutdownInProgress", CodeGroup::StateChange, true, true),
    row(7, "HostNotFound", CodeGroup::Routing, true, true),
    row(6, "HostUnreachable", CodeGroup::Routing, true, true),
    row(89, "NetworkTimeout", CodeGroup::Routing, true, true),
    row(9001, "SocketException", CodeGroup::Routing, true, true),
    row(262, "ExceededTimeLimit", CodeGroup::Other, true, true),
    row(
        134,
        "ReadConcernMajorityNotAvailableYet",
        CodeGroup::Other,
        false,
        true,
    ),
];

/// The table row for `code`, if it is on the retryable list.
pub fn code_row(code: i32) -> Option<&'static CodeRow> {
    RETRYABLE_CODES.iter().find(|r| r.code == code)
}

/// Whether `code` is on the retryable-writes list (pre-4.4 servers).
pub fn is_retryable_write_code(code: i32) -> bool {
    code_row(code).is_some_and(|r| r.writes)
}

/// Whether `code` is on the retryable-reads list.
pub fn is_retryable_read_code(code: i32) -> bool {
    code_row(code).is_some_and(|r| r.reads)
}

/// Where a failure came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A server reply with `ok: 0`, or `ok: 1` with a writeConcernError.
    #[default]
    Server,
    /// A network error (reset, socket timeout, closed connection) after the command was sent.
    Network,
    /// The pool was cleared while checking out a connection: nothing was sent.
    PoolCleared,
    /// No server could be selected: nothing was sent.
    ServerSelection,
    /// A network error, or a reply with `code`, while establishing the connection (hello /
    /// saslStart / saslContinue): the command was not sent (`retryable-reads.md`, Retryable Error).
    Handshake,
}

/// Which kind of server answered, for the pre-4.4 driver-labelling rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerKind {
    /// MongoDB 4.4 or newer: the server adds RetryableWriteError itself.
    #[default]
    Modern,
    /// A pre-4.4 mongod: the driver labels from the top-level code or the writeConcernError code.
    LegacyMongod,
    /// A pre-4.4 mongos: the driver labels from the top-level code only.
    LegacyMongos,
}

/// One failed attempt, as the driver saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MongoError {
    /// Where it came from.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub kind: FailureKind,
    /// The top-level `code` of an `ok: 0` reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i32>,
    /// The top-level `errorLabels` (the only place labels are read from).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub labels: Vec<String>,
    /// `writeConcernError.code`, when the reply carried one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_concern_code: Option<i32>,
    /// `writeErrors[].code`: never consulted for retryability.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::serde_form::or_default"
    )]
    pub write_error_codes: Vec<i32>,
    /// A server-supplied base backoff for overload retries.
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub base_backoff_ms: Option<u64>,
    /// `errmsg`, consulted only for IllegalOperation "Transaction numbers".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl MongoError {
    /// A network error with no labels.
    pub fn network() -> MongoError {
        MongoError {
            kind: FailureKind::Network,
            ..MongoError::default()
        }
    }

    /// A server error with `code` and `labels`.
    pub fn server(code: i32, labels: &[&str]) -> MongoError {
        MongoError {
            code: Some(code),
            labels: labels.iter().map(|l| (*l).to_owned()).collect(),
            ..MongoError::default()
        }
    }

    /// Whether the top-level labels contain `label`.
    pub fn has_label(&self, label: &str) -> bool {
        has_label(&self.labels, label)
    }

    /// Whether nothing was sent (server selection or connection checkout failed, the handshake
    /// included: establishing a connection is part of checking it out in CMAP).
    pub fn before_send(&self) -> bool {
        matches!(
            self.kind,
            FailureKind::PoolCleared | FailureKind::ServerSelection | FailureKind::Handshake
        )
    }

    /// Whether this is a network error: after sending, or while establishing the connection.
    pub fn is_network_error(&self) -> bool {
        match self.kind {
            FailureKind::Network => true,
            FailureKind::Handshake => self.code.is_none(),
            FailureKind::Server | FailureKind::PoolCleared | FailureKind::ServerSelection => false,
        }
    }

    /// Whether a server reply carried this error: any `Server` error, or a handshake reply with a code.
    pub fn is_server_reply(&self) -> bool {
        match self.kind {
            FailureKind::Server => true,
            FailureKind::Handshake => self.code.is_some(),
            FailureKind::Network | FailureKind::PoolCleared | FailureKind::ServerSelection => false,
        }
    }

    /// Whether the error indicates that no write was attempted (`NoWritesPerformed` or nothing sent).
    pub fn no_write_attempted(&self) -> bool {
        self.before_send() || self.has_label(NO_WRITES_PERFORMED)
    }

    /// Whether this is MaxTimeMSExpired, at the top level or inside the writeConcernError.
    pub fn is_max_time_ms_expired(&self) -> bool {
        self.code == Some(MAX_TIME_MS_EXPIRED) || self.write_concern_code == Some(MAX_TIME_MS_EXPIRED)
    }

    /// Adds `label` unless present.
    pub fn add_label(&mut self, label: &str) {
        if !self.has_label(label) {
            self.labels.push(label.to_owned());
        }
    }
}

/// Whether `labels` contains `label` (labels are case-sensitive).
pub fn has_label(labels: &[String], label: &str) -> bool {
    labels.iter().any(|l| l == label)
}

/// The three classes of seed 000 (plus the client-side errors raised before anything was sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The connection failed: the outcome is unknown (unless it failed in the handshake).
    Network,
    /// The server stepped down or is shutting down / recovering / unreachable through mongos.
    StateChange,
    /// Any other server error reply (seed 000 "command errors"); whether it is retried is decided
    /// elsewhere (labels, or the code lists: reads retry 262 and 134 without a label).
    Command,
    /// Server selection or connection checkout failed: nothing was sent.
    Client,
}

/// Classifies an error as network, state-change, command or client-side (seed 000; the
/// state-change group is the code table's `state_change` and `routing` rows). A handshake error
/// is a network error, or classed by its code when the server replied.
pub fn classify_error(error: &MongoError) -> ErrorClass {
    match error.kind {
        _ if error.is_network_error() => ErrorClass::Network,
        FailureKind::PoolCleared | FailureKind::ServerSelection => ErrorClass::Client,
        FailureKind::Server | FailureKind::Network | FailureKind::Handshake => {
            let state_change = |c: Option<i32>| {
                c.and_then(code_row)
                    .is_some_and(|r| matches!(r.group, CodeGroup::StateChange | CodeGroup::Routing))
            };
            if state_change(error.code) || state_change(error.write_concern_code) {
                ErrorClass::StateChange
            } else {
                ErrorClass::Command
            }
        }
    }
}

/// A yes/no answer with the rule that gave it and its spec section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Whether the error is retryable under this rule set.
    pub retryable: bool,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// The spec section the rule comes from.
    pub section: &'static str,
}

const fn verdict(retryable: bool, rule: &'static str, section: &'static str) -> Verdict {
    Verdict {
        retryable,
        rule,
        section,
    }
}

/// The labels a driver reports for an error of a retryable-write-capable write outside a
/// transaction: the server's labels plus `RetryableWriteError` where the driver must add it
/// (`retryable-writes.md`, RetryableWriteError Labels). `retry_writes` is the client option
/// (commitTransaction and abortTransaction pass `true`: they are retried regardless of it).
pub fn retryable_write_labels(error: &MongoError, server: ServerKind, retry_writes: bool) -> Vec<String> {
    let mut out = error.clone();
    if retry_writes && driver_adds_retryable_write_label(error, server).retryable {
        out.add_label(RETRYABLE_WRITE_ERROR);
    }
    out.labels
}

/// Whether the driver itself adds `RetryableWriteError` (network errors, including one while
/// establishing the connection; PoolClearedError; pre-4.4 replies whose top-level code, or mongod
/// writeConcernError code, is on the list; never writeErrors, never a 4.4+ reply, even one to the
/// handshake: "any error that is not a network error").
pub fn driver_adds_retryable_write_label(error: &MongoError, server: ServerKind) -> Verdict {
    let s = RW_LABELS_SECTION;
    match error.kind {
        FailureKind::Network => verdict(true, "network_error_labelled", s),
        // "a network error establishing an initial connection to a server"
        FailureKind::Handshake if error.code.is_none() => verdict(true, "handshake_error_labelled", s),
        FailureKind::PoolCleared => verdict(true, "pool_cleared_labelled", s),
        FailureKind::ServerSelection => verdict(false, "server_selection_not_labelled", RW_EXECUTING_SECTION),
        FailureKind::Server | FailureKind::Handshake => match server {
            ServerKind::Modern => verdict(false, "server_labels_only_on_4_4_plus", s),
            ServerKind::LegacyMongod | ServerKind::LegacyMongos => {
                if error.code.is_some_and(is_retryable_write_code) {
                    verdict(true, "legacy_code_labelled", s)
                } else if error.write_concern_code.is_some_and(is_retryable_write_code) {
                    if server == ServerKind::LegacyMongod {
                        verdict(true, "legacy_mongod_write_concern_code_labelled", s)
                    } else {
                        verdict(false, "legacy_mongos_write_concern_code_not_labelled", s)
                    }
                } else {
                    verdict(false, "legacy_code_not_on_list", s)
                }
            }
        },
    }
}

/// Whether a retryable write may be retried after `error`: the top-level `RetryableWriteError`
/// label decides, after the driver added its own (`retryable-writes.md`, Determining Retryable
/// Write Errors). `retry_writes` false means the write was not a retryable write at all.
pub fn is_retryable_write_error(error: &MongoError, server: ServerKind, retry_writes: bool) -> Verdict {
    if !retry_writes {
        return verdict(false, "retry_writes_disabled", super::RW_OPTION_SECTION);
    }
    if error.has_label(RETRYABLE_WRITE_ERROR) {
        return verdict(true, "retryable_write_error_label", super::RW_ERRORS_SECTION);
    }
    let added = driver_adds_retryable_write_label(error, server);
    let legacy_reply = error.is_server_reply() && server != ServerKind::Modern;
    if added.retryable || legacy_reply {
        added
    } else {
        verdict(false, "no_retryable_write_error_label", super::RW_ERRORS_SECTION)
    }
}

/// Whether a retryable read may be retried after `error`: any network error, PoolClearedError,
/// or a top-level code on the read list, also when met in the handshake (`retryable-reads.md`,
/// Retryable Error). Labels are not needed.
pub fn is_retryable_read_error(error: &MongoError) -> Verdict {
    match error.kind {
        FailureKind::Network => verdict(true, "network_error", RR_ERROR_SECTION),
        FailureKind::PoolCleared => verdict(true, "pool_cleared", RR_ERROR_SECTION),
        FailureKind::ServerSelection => verdict(false, "server_selection_error", RR_RETRY_FAILS_SECTION),
        // "Any of the above retryable errors that occur during a connection handshake"
        FailureKind::Handshake if error.code.is_none_or(is_retryable_read_code) => {
            verdict(true, "handshake_error", RR_ERROR_SECTION)
        }
        FailureKind::Server | FailureKind::Handshake => {
            if error.code.is_some_and(is_retryable_read_code) {
                verdict(true, "retryable_read_code", RR_ERROR_SECTION)
            } else {
                verdict(false, "code_not_on_read_list", RR_ERROR_SECTION)
            }
        }
    }
}

/// The message to raise instead of IllegalOperation (code 20) whose errmsg starts with
/// "Transaction numbers": the deployment does not support retryable writes
/// ([`super::RW_UNSUPPORTED_DEPLOYMENT_SECTION`]).
pub fn unsupported_deployment_message(error: &MongoError) -> Option<&'static str> {
    (error.code == Some(ILLEGAL_OPERATION)
        && error
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("Transaction numbers")))
    .then_some(UNSUPPORTED_DEPLOYMENT_MESSAGE)
}

/// Which of a write's errors surfaces when it gives up (`retryable-writes.md`, Executing
/// Retryable Write Commands): the most recent error that indicates a write attempt; when every
/// error says no write was attempted (`NoWritesPerformed`, or nothing was sent), the first.
/// Returns the index into `errors`; an empty list is a `missing_field` error.
pub fn surfaced_write_error(errors: &[MongoError]) -> Result<usize, Error> {
    if errors.is_empty() {
        return Err(Error::MissingField {
            field: "errors".to_owned(),
        });
    }
    Ok(errors.iter().rposition(|e| !e.no_write_attempted()).unwrap_or(0))
}

/// Which of a read's errors surfaces (`retryable-reads.md`, 3c): the latest error that came from
/// the server or the network; an error raised before sending (server selection, connection
/// checkout and its handshake) gives way to the one before it. Returns the index into `errors`.
pub fn surfaced_read_error(errors: &[MongoError]) -> Result<usize, Error> {
    if errors.is_empty() {
        return Err(Error::MissingField {
            field: "errors".to_owned(),
        });
    }
    Ok(errors.iter().rposition(|e| !e.before_send()).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_table_has_twelve_write_codes_and_thirteen_read_codes() {
        assert_eq!(RETRYABLE_CODES.iter().filter(|r| r.writes).count(), 12);
        assert_eq!(RETRYABLE_CODES.iter().filter(|r| r.reads).count(), 13);
        assert!(!is_retryable_write_code(134) && is_retryable_read_code(134));
        assert!(!is_retryable_write_code(64) && !is_retryable_read_code(11601));
    }

    #[test]
    fn write_errors_never_make_a_write_retryable() {
        let e = MongoError {
            code: None,
            write_error_codes: vec![91],
            ..MongoError::default()
        };
        for server in [
            ServerKind::Modern,
            ServerKind::LegacyMongod,
            ServerKind::LegacyMongos,
        ] {
            assert!(!is_retryable_write_error(&e, server, true).retryable);
        }
    }

    #[test]
    fn surfacing_prefers_the_latest_attempted_write() {
        let nwp = MongoError::server(10107, &[RETRYABLE_WRITE_ERROR, NO_WRITES_PERFORMED]);
        let wrote = MongoError::server(91, &[RETRYABLE_WRITE_ERROR]);
        assert_eq!(surfaced_write_error(&[wrote.clone(), nwp.clone()]).unwrap(), 0);
        assert_eq!(surfaced_write_error(&[nwp.clone(), nwp.clone()]).unwrap(), 0);
        assert_eq!(surfaced_write_error(&[nwp.clone(), wrote.clone()]).unwrap(), 1);
        assert_eq!(surfaced_write_error(&[wrote.clone(), wrote]).unwrap(), 1);
        assert_eq!(surfaced_write_error(&[]).unwrap_err().code(), "missing_field");
    }
}
