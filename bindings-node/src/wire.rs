//! The rest of the core: reasons, error codes, and the JSON API by function name (MongoDB, HTTP,
//! simulation, the core's sentences about a decision), JSON text in and out.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::Error as CoreError;
use serde_json::Value;

use crate::convert::{self, Js};
use crate::errors::run;
use crate::policy::{or_default, PolicyHandle};
use crate::request;

/// The core's version.
#[napi(catch_unwind)]
pub fn version() -> &'static str {
    retrypolicy::VERSION
}

/// The stable error codes, shared by every language.
#[napi(catch_unwind)]
pub fn error_codes() -> Vec<&'static str> {
    CoreError::ALL_CODES.to_vec()
}

/// One row of the RFC 0049 RetryReason table.
#[napi(object, object_from_js = false)]
pub struct ReasonRow {
    /// The reason's name.
    pub name: &'static str,
    /// Whether a non-idempotent request may be retried for it.
    pub allows_non_idempotent_retry: bool,
    /// Whether it is retried regardless of the strategy.
    pub always_retry: bool,
}

/// The RFC 0049 RetryReason table, in the core's order.
#[napi(catch_unwind)]
pub fn reason_table() -> Vec<ReasonRow> {
    retrypolicy::reason::REASON_TABLE
        .iter()
        .map(|r| ReasonRow {
            name: r.name,
            allows_non_idempotent_retry: r.allows_non_idempotent_retry,
            always_retry: r.always_retry,
        })
        .collect()
}

/// The canonical name of a reason (aliases accepted).
#[napi(catch_unwind)]
pub fn parse_reason(env: Env, reason: Unknown) -> napi::Result<&'static str> {
    run(&env, || Ok(convert::reason(&Js(reason), "reason")?.name()))
}

/// The core's JSON API: `function` by its fixture name, JSON text in and out. A `request` (a
/// camelCase object, read as `decide` reads it) and a `policy` handle go into the input as
/// `request` and `policy`.
#[napi(catch_unwind)]
pub fn call_json(
    env: Env,
    function: Unknown,
    input: Unknown,
    request: Unknown,
    policy: Option<&PolicyHandle>,
) -> napi::Result<String> {
    run(&env, || {
        let function = convert::with_str(&Js(function), "function", |s| Ok(s.to_owned()))?;
        let mut input: Value =
            convert::with_str(&Js(input), "input", |s| Ok(retrypolicy_wire::from_json_str(s)?))?;
        let json =
            |v: Result<Value, serde_json::Error>| v.map_err(|e| napi::Error::from_reason(e.to_string()));
        if let Some(doc) = input.as_object_mut() {
            if !Js(request).is_undefined()? {
                doc.insert(
                    "request".into(),
                    json(serde_json::to_value(request::from_object(request)?))?,
                );
            }
            if let Some(p) = policy {
                doc.insert("policy".into(), json(serde_json::to_value(or_default(Some(p))))?);
            }
        }
        Ok(retrypolicy_wire::api::call(&function, &input)?.to_string())
    })
}
