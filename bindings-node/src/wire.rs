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

/// The RFC 0049 reason names, in the core's table order.
#[napi(catch_unwind)]
pub fn reason_names() -> Vec<&'static str> {
    retrypolicy::reason::REASON_TABLE.iter().map(|r| r.name).collect()
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
