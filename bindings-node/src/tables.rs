//! Small integer codes for the core's enums, so that the hot path passes numbers, not strings.
//! The JavaScript layer receives every list from `tables()` at load time and hard-codes none.

use std::sync::LazyLock;

use retrypolicy::classify::dispatch::DISPATCH_TABLE;
use retrypolicy::{DispatchFailure, HttpMethod, NoRetryCause, Operation, Rule, Service, StrategyKind};
use serde::Serialize;

/// Every HTTP method the core knows, in code order.
pub const METHODS: [HttpMethod; 7] = [
    HttpMethod::Get,
    HttpMethod::Head,
    HttpMethod::Post,
    HttpMethod::Put,
    HttpMethod::Delete,
    HttpMethod::Patch,
    HttpMethod::Options,
];

/// Every service, in code order.
pub const SERVICES: [Service; 7] = [
    Service::Kv,
    Service::Query,
    Service::Analytics,
    Service::Search,
    Service::Views,
    Service::ClusterManager,
    Service::Management,
];

/// Every decision rule, in code order.
pub const RULES: [Rule; 7] = [
    Rule::DeadlinePassed,
    Rule::UnknownNeverRetried,
    Rule::AlwaysRetryControlledBackoff,
    Rule::BestEffortBackoff,
    Rule::BestEffortNotIdempotent,
    Rule::FailFast,
    Rule::CustomStrategy,
];

/// Every no-retry cause, in code order.
pub const CAUSES: [NoRetryCause; 4] = [
    NoRetryCause::NotIdempotent,
    NoRetryCause::StrategyDeclined,
    NoRetryCause::DeadlinePassed,
    NoRetryCause::UnknownReason,
];

/// The built-in strategies, in code order.
pub const STRATEGIES: [StrategyKind; 2] = [StrategyKind::BestEffort, StrategyKind::FailFast];

/// Every operation, in code order: the KV catalog, then query/analytics (readonly false, true),
/// search, views, then cluster manager and management for each method (see [`operation`]).
pub static OPERATIONS: LazyLock<Vec<Operation>> = LazyLock::new(|| {
    let mut ops: Vec<Operation> = retrypolicy::operation::KV_CATALOG
        .iter()
        .map(|r| Operation::Kv(r.operation))
        .collect();
    for readonly in [false, true] {
        ops.push(Operation::Query { readonly });
    }
    for readonly in [false, true] {
        ops.push(Operation::Analytics { readonly });
    }
    ops.push(Operation::Search);
    ops.push(Operation::Views);
    ops.extend(METHODS.iter().map(|m| Operation::ClusterManager(*m)));
    ops.extend(METHODS.iter().map(|m| Operation::Management(*m)));
    ops
});

/// The code of an operation (every operation has one).
pub fn operation_code(op: Operation) -> usize {
    OPERATIONS.iter().position(|o| *o == op).unwrap_or(0)
}

/// The operation for a code, if in range: the same order as [`OPERATIONS`], decoded from the
/// constant tables so that the hot path needs no lazy initialisation check.
#[inline]
pub fn operation(code: f64) -> Option<Operation> {
    let i = retrypolicy::units::whole_number(code, 255.0)? as usize;
    let kv = retrypolicy::operation::KV_CATALOG.len();
    let m = METHODS.len();
    Some(match i {
        _ if i < kv => Operation::Kv(retrypolicy::operation::KV_CATALOG[i].operation),
        _ if i < kv + 2 => Operation::Query {
            readonly: i == kv + 1,
        },
        _ if i < kv + 4 => Operation::Analytics {
            readonly: i == kv + 3,
        },
        _ if i == kv + 4 => Operation::Search,
        _ if i == kv + 5 => Operation::Views,
        _ if i < kv + 6 + m => Operation::ClusterManager(METHODS[i - kv - 6]),
        _ if i < kv + 6 + 2 * m => Operation::Management(METHODS[i - kv - 6 - m]),
        _ => return None,
    })
}

/// The code of a rule.
#[inline]
pub fn rule_code(rule: Rule) -> u32 {
    rule as u32
}

/// The code of a cause.
#[inline]
pub fn cause_code(cause: NoRetryCause) -> u32 {
    cause as u32
}

// The codes above are the discriminants: both tables must stay in declaration order.
const _: () = {
    let mut i = 0;
    while i < RULES.len() {
        assert!(RULES[i] as usize == i, "RULES is not in declaration order");
        i += 1;
    }
    let mut i = 0;
    while i < CAUSES.len() {
        assert!(CAUSES[i] as usize == i, "CAUSES is not in declaration order");
        i += 1;
    }
};

/// The dispatch failures, in the core table's order.
pub fn dispatch_failures() -> Vec<DispatchFailure> {
    DISPATCH_TABLE.iter().map(|(f, _, _)| *f).collect()
}

/// The snake_case (or UPPERCASE) name serde gives a core enum value.
pub fn wire_name<T: Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_codes_decode_to_the_table() {
        for (i, op) in OPERATIONS.iter().enumerate() {
            assert_eq!(operation(i as f64), Some(*op), "code {i}");
            assert_eq!(operation_code(*op), i);
        }
        for bad in [-1.0, 0.5, OPERATIONS.len() as f64, f64::NAN] {
            assert_eq!(operation(bad), None);
        }
    }
}
