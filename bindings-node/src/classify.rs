//! Classification: what happened (a status, a code, a failure) → the reason to hand to `decide`.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::classify::dispatch::DispatchFailure;
use retrypolicy::{Classification, KvOperation};

use crate::convert::{self, Js};
use crate::errors::{run, Res};
use crate::policy::{self, ErrorMapHandle, PolicyHandle};

/// A classification as the package's object (the JavaScript layer freezes it).
#[napi(object, object_from_js = false, use_nullable = true)]
pub struct ClassificationObject {
    /// The reason to pass to `decide`, or null: fail without retry handling.
    pub reason: Option<&'static str>,
    /// The stable name of the rule that matched.
    pub rule: &'static str,
    /// The spec section of that rule.
    pub section: &'static str,
    /// The error to surface instead, or null.
    pub surface_as: Option<&'static str>,
}

/// Runs a classifier and returns its result as the package's object.
fn classified(env: &Env, body: impl FnOnce() -> Res<Classification>) -> napi::Result<ClassificationObject> {
    run(env, || {
        let c = body()?;
        Ok(ClassificationObject {
            reason: c.reason.map(|r| r.name()),
            rule: c.rule,
            section: c.section,
            surface_as: c.surface_as,
        })
    })
}

/// Classifies a KV status (a number or a `"0x.."` string) for a KV operation.
#[napi(catch_unwind)]
pub fn classify_kv(
    env: Env,
    operation: Unknown,
    status: Unknown,
    error_map: Option<&ErrorMapHandle>,
    policy: Option<&PolicyHandle>,
) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let op = convert::with_str(&Js(operation), "operation", |s| {
            Ok(KvOperation::parse("operation", s)?)
        })?;
        let status = convert::status(&Js(status), "status")?;
        let compat = &policy::or_default(policy).compat;
        Ok(retrypolicy::classify_kv(
            op,
            status,
            policy::error_map(error_map),
            compat,
        ))
    })
}

/// A query or analytics error code.
fn code(v: Unknown) -> Res<u32> {
    convert::u32_or(&Js(v), "code", None)
}

/// Classifies the first error of a query response.
#[napi(catch_unwind)]
pub fn classify_query(
    env: Env,
    error_code: Unknown,
    message: Unknown,
    policy: Option<&PolicyHandle>,
) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let message = convert::text(&Js(message), "message")?;
        Ok(retrypolicy::classify_query(
            code(error_code)?,
            &message,
            &policy::or_default(policy).compat,
        ))
    })
}

/// Classifies the first error of an analytics response.
#[napi(catch_unwind)]
pub fn classify_analytics(env: Env, error_code: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || Ok(retrypolicy::classify_analytics(code(error_code)?)))
}

/// An HTTP status in 0..=65535.
fn http_status(v: Unknown) -> Res<u16> {
    Ok(convert::whole(&Js(v), "httpStatus", u64::from(u16::MAX), None)? as u16)
}

/// Classifies a search response's HTTP status.
#[napi(catch_unwind)]
pub fn classify_search(env: Env, status: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || Ok(retrypolicy::classify_search(http_status(status)?)))
}

/// Classifies a views response from its HTTP status and body text.
#[napi(catch_unwind)]
pub fn classify_views(env: Env, status: Unknown, body: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let body = convert::text(&Js(body), "body")?;
        Ok(retrypolicy::classify_views(http_status(status)?, &body))
    })
}

/// Names the reason for a failure the SDK observed itself (`"socket_closed_while_in_flight"`, ...).
#[napi(catch_unwind)]
pub fn classify_dispatch(env: Env, failure: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let failure: DispatchFailure = convert::name(&Js(failure), "failure")?;
        Ok(retrypolicy::classify_dispatch(failure))
    })
}
