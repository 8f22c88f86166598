//! retrypolicy's wire layer: the JSON API by function name ([`api::call`]), its input envelopes,
//! and reading JSON into the core's types with typed errors that name the field.
//!
//! The core (`retrypolicy`) holds the rules; this crate is what the CLI, the fixture runners and
//! the C, wasm, Python and Node bindings use to read and write JSON.
#![forbid(unsafe_code)]

pub mod api;
#[cfg(feature = "aws")]
mod aws;
#[cfg(feature = "grpc")]
mod grpc;
mod input;
pub mod json;
mod runs;

pub use json::{from_json_str, from_json_value, parse_name};
pub use retrypolicy::Error;
pub use runs::placed;

#[cfg(feature = "guards")]
use retrypolicy::BudgetVerdict;
use retrypolicy::Policy;

/// Parses and validates a policy document.
pub fn parse_policy(text: &str) -> Result<Policy, Error> {
    let policy: Policy = from_json_str(text)?;
    policy.validate()?;
    Ok(policy)
}

/// Converts and validates an already-parsed policy document.
pub fn policy_from_value(value: &serde_json::Value) -> Result<Policy, Error> {
    let policy: Policy = from_json_value(value)?;
    policy.validate()?;
    Ok(policy)
}

/// A budget verdict from its JSON form (as `budget_run` writes it), its fields checked against
/// its rule; errors name `budget_verdict.<field>`.
#[cfg(feature = "guards")]
pub fn budget_verdict_from_value(value: &serde_json::Value) -> Result<BudgetVerdict, Error> {
    from_json_value::<input::VerdictInput>(value)
        .map_err(|e| {
            let field = e.field().to_owned();
            e.with_field(&if field.is_empty() {
                "budget_verdict".to_owned()
            } else {
                format!("budget_verdict.{field}")
            })
        })?
        .verdict()
}
