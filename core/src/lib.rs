//! retrypolicy: one retry-policy engine for every SDK.
//!
//! A pure core: no I/O, no clock, no randomness of its own, no global state. The caller names
//! what happened ([`classify`]), then asks [`decide()`] whether and when to retry, passing the
//! attempt count, elapsed time, timeout and a random draw for jitter. The rules come from
//! Couchbase SDK3 RFC 0049 "Retry Handling"; each table lives once, as data, beside its citation.
//!
//! ```
//! use retrypolicy::{decide, KvOperation, Operation, Policy, Request, RetryReason};
//!
//! let mut request = Request::new(Operation::Kv(KvOperation::Upsert), 2_000, 2_500);
//! request.attempts = 7;
//! let decision = decide(&request, RetryReason::KvNotMyVbucket, &Policy::default()).unwrap();
//! // An always-retry reason asks for 1 s; 500 ms are left, so the delay is capped.
//! assert_eq!(decision.delay_ms(), Some(500));
//! ```
#![forbid(unsafe_code)]

#[cfg(feature = "aws")]
pub mod aws;
pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod budgeted;
pub mod classify;
pub mod decide;
pub mod error;
pub mod explain;
pub mod features;
pub mod grpc;
pub mod http;
#[cfg(feature = "mongodb")]
pub mod mongodb;
pub mod operation;
pub mod policy;
pub mod reason;
pub mod request_form;
pub mod run;
pub mod serde_form;
#[cfg(feature = "storms")]
pub mod simulate;
#[cfg(feature = "storms")]
pub mod storm;
pub mod strategy;
pub mod units;

pub use backoff::{apply_jitter, backoff_delay, controlled_backoff, Backoff, FirstDelay, Jitter};
pub use breaker::{
    BreakerChange, BreakerChangeRule, BreakerOutcome, BreakerRule, BreakerState, BreakerVerdict, CanaryToken,
    CircuitBreaker, MAX_BREAKER_CHANGES,
};
#[cfg(feature = "guards")]
pub use breaker::{BreakerConfig, BreakerDocument, BreakerSnapshot};
#[cfg(feature = "guards")]
pub use budget::{
    is_aws_throttling_error, BudgetConfig, BudgetDocument, BudgetSnapshot, RetryQuotaCosts,
    AWS_THROTTLING_ERROR_CODES,
};
pub use budget::{
    BudgetCause, BudgetEvent, BudgetEventKind, BudgetKind, BudgetRule, BudgetVerdict, RetryBudget, RetryCause,
};
#[cfg(feature = "guards")]
pub use budgeted::{decide_with_budget, explain_with_budget};
pub use budgeted::{BudgetRefusal, BudgetedDecision};
#[cfg(feature = "couchbase")]
pub use classify::analytics::classify_analytics;
pub use classify::dispatch::{classify_dispatch, DispatchFailure};
#[cfg(feature = "couchbase")]
pub use classify::error_map::{ErrorMap, ErrorMapEntry};
#[cfg(feature = "couchbase")]
pub use classify::kv::classify_kv;
#[cfg(feature = "couchbase")]
pub use classify::query::classify_query;
#[cfg(feature = "couchbase")]
pub use classify::search::classify_search;
#[cfg(feature = "couchbase")]
pub use classify::views::classify_views;
pub use classify::Classification;
pub use decide::{
    decide, decide_after_strategy, decide_before_strategy, decide_with, Decision, NoRetry, NoRetryCause,
    Request, RetryAfter, Rule,
};
pub use error::Error;
pub use explain::explain;
pub use features::{Feature, FEATURES};
pub use http::{
    classify_attempt, classify_http_status, classify_network_error, parse_http_date, parse_imf_fixdate,
    parse_retry_after, HttpAttempt, HttpClass, HttpClassification, StepOutcome,
};
#[cfg(feature = "http")]
pub use http::{
    next as http_next, next_with_budget as http_next_with_budget, LoopAction, LoopDecision, LoopState,
    RetryLoop,
};
#[cfg(feature = "mongodb")]
pub use mongodb::backpressure::{is_overload_error, is_retryable_overload_error, overload_backoff_ms};
#[cfg(feature = "mongodb")]
pub use mongodb::errors::{
    classify_error, is_retryable_read_error, is_retryable_write_error, surfaced_read_error,
    surfaced_write_error, ErrorClass, FailureKind, MongoError, ServerKind,
};
#[cfg(feature = "mongodb")]
pub use mongodb::idempotency::{
    analyze_idempotency, duplicate_key_on_retry, pending_token_rewrite, positional_hazards,
    IdempotencyReport, OperationDoc,
};
#[cfg(feature = "mongodb")]
pub use mongodb::operations::{eligibility, Eligibility, MongoOperation, OperationName};
#[cfg(feature = "mongodb")]
pub use mongodb::retry::{decide_mongo, driver_labels, MongoAction, MongoDecision, MongoRequest};
#[cfg(feature = "mongodb")]
pub use mongodb::transaction::{
    run_transaction, step as transaction_step, transaction_backoff_ms, transaction_error_labels,
    SessionState, TransactionAction, TransactionCommand, TransactionEvent, TransactionState,
};
pub use operation::{HttpMethod, KvOperation, Operation, Service};
pub use policy::{Compat, Policy};
pub use reason::RetryReason;
#[cfg(feature = "http")]
pub use run::HttpRules;
#[cfg(feature = "mongodb")]
pub use run::MongodbRules;
pub use run::{
    Clock, DecideRules, Guards, Outcome, Run, RunAction, RunConfig, RunDecision, RunEnd, RunPhase, RunRules,
    RunSignal, RunStats, RunStep,
};
#[cfg(feature = "storms")]
pub use simulate::{simulate, Ending, Scenario, Step, Timeline};
#[cfg(feature = "storms")]
pub use storm::{simulate_storm, StormReport, StormScenario, MAX_STORM_ATTEMPTS, MAX_STORM_REQUESTS};
pub use strategy::{BestEffort, FailFast, RetryStrategy, StrategyKind, StrategyVerdict};

/// This crate's version, which every binding reports too.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The README's Rust examples, compiled and run as doctests so they stay true.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The crate README's example (what crates.io shows), compiled and run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct CrateReadmeDoctests;
