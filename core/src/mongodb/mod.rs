//! MongoDB retry rules: retryable writes and reads, client backpressure, the convenient
//! transaction API (`withTransaction`) as a state machine, and the application-level
//! idempotency strategy of "Building Resilient MongoDB Applications" (seed 000) and the
//! positional-update hazard of seed 003.
//!
//! Every rule cites the MongoDB specification section it implements (mongodb/specifications,
//! `source/retryable-writes`, `retryable-reads`, `client-backpressure`, `transactions`,
//! `transactions-convenient-api`). Like the rest of the core, nothing here reads a clock or
//! draws a random number: elapsed time and jitter draws come from the caller.

pub mod backpressure;
pub mod errors;
pub mod idempotency;
pub mod operations;
pub mod pending_token;
pub mod retry;
pub mod transaction;

/// `retryable-writes.md`, "RetryableWriteError Labels".
pub const RW_LABELS_SECTION: &str = "MongoDB Retryable Writes, RetryableWriteError Labels";
/// `retryable-writes.md`, "Determining Retryable Write Errors".
pub const RW_ERRORS_SECTION: &str = "MongoDB Retryable Writes, Determining Retryable Write Errors";
/// `retryable-writes.md`, "Supported Write Operations".
pub const RW_SUPPORTED_SECTION: &str = "MongoDB Retryable Writes, Supported Write Operations";
/// `retryable-writes.md`, "Unsupported Write Operations".
pub const RW_UNSUPPORTED_SECTION: &str = "MongoDB Retryable Writes, Unsupported Write Operations";
/// `retryable-writes.md`, "Retryable Writes Within Transactions".
pub const RW_IN_TRANSACTION_SECTION: &str = "MongoDB Retryable Writes, Retryable Writes Within Transactions";
/// `retryable-writes.md`, "Executing Retryable Write Commands".
pub const RW_EXECUTING_SECTION: &str = "MongoDB Retryable Writes, Executing Retryable Write Commands";
/// `retryable-writes.md`, "retryWrites".
pub const RW_OPTION_SECTION: &str = "MongoDB Retryable Writes, retryWrites";
/// `retryable-writes.md` pseudo-code, IllegalOperation (code 20) "Transaction numbers".
pub const RW_UNSUPPORTED_DEPLOYMENT_SECTION: &str =
    "MongoDB Retryable Writes, Executing Retryable Write Commands (IllegalOperation pseudo-code)";
/// `retryable-reads.md`, "Terms: Retryable Error".
pub const RR_ERROR_SECTION: &str = "MongoDB Retryable Reads, Retryable Error";
/// `retryable-reads.md`, "Supported Read Operations".
pub const RR_SUPPORTED_SECTION: &str = "MongoDB Retryable Reads, Supported Read Operations";
/// `retryable-reads.md`, "Unsupported Read Operations".
pub const RR_UNSUPPORTED_SECTION: &str = "MongoDB Retryable Reads, Unsupported Read Operations";
/// `retryable-reads.md`, "2a. When not to allow retry".
pub const RR_NOT_ALLOWED_SECTION: &str = "MongoDB Retryable Reads, 2a. When not to allow retry";
/// `retryable-reads.md`, "3c. If a retry attempt fails".
pub const RR_RETRY_FAILS_SECTION: &str = "MongoDB Retryable Reads, 3c. If a retry attempt fails";
/// `client-backpressure.md`, "Overload retry policy".
pub const BP_POLICY_SECTION: &str = "MongoDB Client Backpressure, Overload retry policy";
/// `client-backpressure.md`, "Interaction with Other Retry Policies".
pub const BP_INTERACTION_SECTION: &str = "MongoDB Client Backpressure, Interaction with Other Retry Policies";
/// `client-backpressure.md`, "Retryable Overload Error".
pub const BP_ERROR_SECTION: &str = "MongoDB Client Backpressure, Retryable Overload Error";
/// `transactions.md`, "Transient Transaction Error".
pub const TXN_TRANSIENT_SECTION: &str = "MongoDB Transactions, Transient Transaction Error";
/// `transactions.md`, "UnknownTransactionCommitResult".
pub const TXN_UTCR_SECTION: &str = "MongoDB Transactions, UnknownTransactionCommitResult";
/// `transactions.md`, "Interaction with Retryable Writes".
pub const TXN_RETRYABLE_WRITES_SECTION: &str = "MongoDB Transactions, Interaction with Retryable Writes";
/// `transactions.md`, "Interaction with Client Backpressure".
pub const TXN_BACKPRESSURE_SECTION: &str = "MongoDB Transactions, Interaction with Client Backpressure";
/// `transactions.md`, "commitTransaction".
pub const TXN_COMMIT_SECTION: &str = "MongoDB Transactions, commitTransaction";
/// `transactions-convenient-api.md`, "ClientSession.withTransaction".
pub const WITH_TXN_SECTION: &str = "MongoDB Convenient Transactions API, ClientSession.withTransaction";
/// `transactions-convenient-api.md`, "Sequence of Actions" (step 2: the backoff).
pub const WITH_TXN_BACKOFF_SECTION: &str =
    "MongoDB Convenient Transactions API, Sequence of Actions (step 2) and Pseudo-code";
/// `transactions-convenient-api.md`, "Timeout Error propagation".
pub const WITH_TXN_TIMEOUT_SECTION: &str = "MongoDB Convenient Transactions API, Timeout Error propagation";
/// `transactions-convenient-api.md`, "The commit is not retried after a MaxTimeMSExpired error".
pub const WITH_TXN_MAX_TIME_SECTION: &str =
    "MongoDB Convenient Transactions API, The commit is not retried after a MaxTimeMSExpired error";
/// Seed 000, "Building Resilient MongoDB Applications" (retry network errors once, make operations idempotent).
pub const SEED_RESILIENT_SECTION: &str = "Seed 000, Building Resilient MongoDB Applications";
/// Seed 003, positional updates by array index under concurrency.
pub const SEED_POSITIONAL_SECTION: &str =
    "Seed 003, positional updates by index (Incomplete/Null Record Corruption)";
