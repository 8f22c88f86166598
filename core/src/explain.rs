//! One plain sentence per decision, shared by the CLI, the bindings and the browser explorer.

use crate::decide::{Decision, NoRetryCause, Request, Rule};
use crate::operation::Operation;

/// Names the operation the way a person would: "KV upsert", "read-only query", "management GET".
pub fn describe_operation(op: &Operation) -> String {
    match op {
        Operation::Kv(k) => format!("KV {}", k.name()),
        Operation::Query { readonly: true } => "read-only query".to_owned(),
        Operation::Query { readonly: false } => "query".to_owned(),
        Operation::Analytics { readonly: true } => "read-only analytics query".to_owned(),
        Operation::Analytics { readonly: false } => "analytics query".to_owned(),
        Operation::Search => "search request".to_owned(),
        Operation::Views => "views request".to_owned(),
        Operation::ClusterManager(m) => format!("cluster manager {}", format!("{m:?}").to_uppercase()),
        Operation::Management(m) => format!("management {}", format!("{m:?}").to_uppercase()),
    }
}

/// The decision for `request` as one sentence naming the rule and the spec section.
pub fn explain(request: &Request, decision: &Decision) -> String {
    let op = describe_operation(&request.operation);
    let idem = if request.is_idempotent() {
        "idempotent"
    } else {
        "not idempotent"
    };
    let why = match decision {
        Decision::Retry(r) => {
            let basis = match r.rule {
                Rule::AlwaysRetryControlledBackoff => {
                    format!("{} is an always-retry reason, so the controlled backoff applies", r.reason)
                }
                Rule::BestEffortBackoff if request.is_idempotent() => {
                    format!("the {op} is idempotent, so best effort retries {} with its backoff", r.reason)
                }
                Rule::BestEffortBackoff => format!(
                    "the {op} is not idempotent but {} allows non-idempotent retry, so best effort retries it",
                    r.reason
                ),
                _ => format!("the strategy asked to retry {}", r.reason),
            };
            let left = request.timeout_ms.saturating_sub(request.elapsed_ms);
            let tail = if r.capped {
                format!(
                    ", cut to the {left} ms left before the {} ms timeout, after which it is cancelled",
                    request.timeout_ms
                )
            } else if r.then_cancel {
                format!(
                    "; the wait ends at the {} ms timeout, so it is cancelled then",
                    request.timeout_ms
                )
            } else {
                String::new()
            };
            format!(
                "Retry the {op} after {} ms (retry {} of this request): {basis}{tail}.",
                r.delay_ms,
                r.attempts.saturating_add(1)
            )
        }
        Decision::NoRetry(n) => {
            let because = match n.cause {
                NoRetryCause::DeadlinePassed => format!(
                    "it is {} ms into a {} ms timeout, and a request at or past its timeout is never retried",
                    request.elapsed_ms, request.timeout_ms
                ),
                NoRetryCause::UnknownReason => {
                    "UNKNOWN failures are never retried, to avoid accidental data loss".to_owned()
                }
                NoRetryCause::NotIdempotent => format!(
                    "the {op} is {idem} and {} does not allow retrying non-idempotent requests",
                    n.reason
                ),
                NoRetryCause::StrategyDeclined if n.rule == Rule::FailFast => {
                    format!("the fail-fast strategy does not retry {}", n.reason)
                }
                NoRetryCause::StrategyDeclined => format!("the strategy declined to retry {}", n.reason),
            };
            format!("Do not retry the {op}: {because}.")
        }
    };
    format!("{why} [rule {}; {}]", decision.rule().name(), decision.section())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decide, KvOperation, Policy, RetryReason};

    #[test]
    fn the_rfc_capping_example_reads_plainly() {
        let mut req = Request::new(Operation::Kv(KvOperation::Upsert), 2000, 2500);
        req.attempts = 7;
        let d = decide(&req, RetryReason::KvNotMyVbucket, &Policy::default()).unwrap();
        assert_eq!(
            explain(&req, &d),
            "Retry the KV upsert after 500 ms (retry 8 of this request): KV_NOT_MY_VBUCKET is an \
             always-retry reason, so the controlled backoff applies, cut to the 500 ms left before the \
             2500 ms timeout, after which it is cancelled. [rule always_retry_controlled_backoff; RFC 0049, \
             Retry Orchestration; Controlled Backoff for Always Retry]"
        );
    }

    #[test]
    fn a_non_idempotent_refusal_names_the_reason() {
        let req = Request::new(Operation::Kv(KvOperation::Upsert), 5, 2500);
        let d = decide(&req, RetryReason::SocketClosedWhileInFlight, &Policy::default()).unwrap();
        assert_eq!(
            explain(&req, &d),
            "Do not retry the KV upsert: the KV upsert is not idempotent and SOCKET_CLOSED_WHILE_IN_FLIGHT \
             does not allow retrying non-idempotent requests. [rule best_effort_not_idempotent; RFC 0049, Best Effort]"
        );
    }
}
