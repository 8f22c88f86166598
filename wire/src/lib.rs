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
pub mod objects;
mod runs;

pub use json::{from_json_str, from_json_value, parse_name};
pub use retrypolicy::Error;
pub use runs::placed;

#[cfg(feature = "guards")]
use retrypolicy::BudgetVerdict;
use retrypolicy::Policy;

/// An attempt's outcome from its JSON text in the wire form (`{"kind": "http", "status": 503}`),
/// as the Node addon and the wasm module take it; errors name `outcome.<field>`, and a kind of a
/// feature this build leaves out is the core's not-built error naming the kind and the feature.
pub fn outcome_from_json(text: &str) -> Result<retrypolicy::Outcome, Error> {
    // One parse on the way that succeeds (the runners' every failed attempt comes this way); the
    // kind is looked at only when the outcome is refused.
    from_json_str(text).map_err(|e| {
        let value: Option<serde_json::Value> = serde_json::from_str(text).ok();
        let kind = value
            .as_ref()
            .and_then(|v| v.get("kind"))
            .and_then(serde_json::Value::as_str);
        if let Some((kind, feature)) = kind.and_then(|k| unbuilt_outcome_kind(k).map(|f| (k, f))) {
            return retrypolicy::features::not_built("outcome.kind", kind, feature);
        }
        // The tagged enum reads a kind's fields buffered, which loses the path inside a nested
        // document: the error of a MongoDB or AWS error document is found by reading it again.
        let error = value.as_ref().and_then(|v| v.get("error"));
        match error.and_then(|error| nested_error(kind, error)) {
            Some(inner) => placed("outcome.error", inner),
            None => placed("outcome", e),
        }
    })
}

/// What reading `error`, the error document of an outcome of `kind`, refuses (None when it reads,
/// or the kind has none).
#[cfg_attr(not(any(feature = "mongodb", feature = "aws")), allow(unused_variables))]
fn nested_error(kind: Option<&str>, error: &serde_json::Value) -> Option<Error> {
    match kind {
        #[cfg(feature = "mongodb")]
        Some("mongodb") => from_json_value::<retrypolicy::MongoError>(error).err(),
        #[cfg(feature = "aws")]
        Some("aws") => from_json_value::<retrypolicy::aws::AwsError>(error).err(),
        _ => None,
    }
}

/// The feature an outcome of `kind` needs, when this build leaves it out.
fn unbuilt_outcome_kind(kind: &str) -> Option<&'static str> {
    match kind {
        "kv" if !cfg!(feature = "couchbase") => Some("couchbase"),
        "mongodb" if !cfg!(feature = "mongodb") => Some("mongodb"),
        "grpc" if !cfg!(feature = "grpc") => Some("grpc"),
        "aws" if !cfg!(feature = "aws") => Some("aws"),
        _ => None,
    }
}

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

#[cfg(test)]
mod tests {
    use super::outcome_from_json;
    use retrypolicy::Outcome;

    #[test]
    fn an_outcome_reads_from_its_wire_form_and_its_errors_name_the_field() {
        let http = outcome_from_json(r#"{"kind": "http", "status": 429, "retry_after": "1"}"#).unwrap();
        let want = Outcome::Http {
            status: 429,
            retry_after: Some("1".to_owned()),
        };
        assert_eq!(http, want);
        let code_field = |text: &str| {
            let e = outcome_from_json(text).unwrap_err();
            (e.code(), e.field().to_owned())
        };
        assert_eq!(
            code_field(r#"{"kind": "nope"}"#),
            ("unknown_name", "outcome.kind".to_owned())
        );
        assert_eq!(code_field("{}"), ("missing_field", "outcome.kind".to_owned()));
        assert_eq!(
            code_field(r#"{"kind": "http", "status": 200, "readonly": false}"#),
            ("unknown_field", "outcome.readonly".to_owned())
        );
        assert_eq!(
            code_field(r#"{"kind": "http"}"#),
            ("missing_field", "outcome.status".to_owned())
        );
        // A key inside an error document is named inside it.
        #[cfg(feature = "mongodb")]
        assert_eq!(
            code_field(r#"{"kind": "mongodb", "error": {"bogus": 1}}"#),
            ("unknown_field", "outcome.error.bogus".to_owned())
        );
        #[cfg(feature = "aws")]
        assert_eq!(
            code_field(r#"{"kind": "aws", "error": {"bogus": 1}}"#),
            ("unknown_field", "outcome.error.bogus".to_owned())
        );
    }
}
