//! Classification: what happened (a status, a code, a failure) → the reason to hand to `decide`.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::classify::dispatch::DispatchFailure;
use retrypolicy::{Classification, KvOperation};

use crate::convert;
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
#[napi]
pub fn classify_kv(
    env: Env,
    operation: Unknown,
    status: Unknown,
    error_map: Option<&ErrorMapHandle>,
    policy: Option<&PolicyHandle>,
) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let op = convert::with_str(&operation, "operation", |s| {
            Ok(KvOperation::parse("operation", s)?)
        })?;
        let status = convert::status(&status, "status")?;
        let compat = &policy::or_default(policy).compat;
        Ok(retrypolicy::classify_kv(
            op,
            status,
            policy::error_map(error_map),
            compat,
        ))
    })
}

/// Classifies the first error of a query response.
#[napi]
pub fn classify_query(
    env: Env,
    code: Unknown,
    message: Unknown,
    policy: Option<&PolicyHandle>,
) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let code = convert::u32_value(&code, "code")?;
        let message = convert::text(&message, "message")?;
        Ok(retrypolicy::classify_query(
            code,
            &message,
            &policy::or_default(policy).compat,
        ))
    })
}

/// Classifies the first error of an analytics response.
#[napi]
pub fn classify_analytics(env: Env, code: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        Ok(retrypolicy::classify_analytics(convert::u32_value(
            &code, "code",
        )?))
    })
}

/// An HTTP status in 0..=65535.
fn http_status(v: &Unknown) -> Res<u16> {
    Ok(convert::whole(
        v,
        "httpStatus",
        u64::from(u16::MAX),
        "a whole number in 0..=65535",
    )? as u16)
}

/// Classifies a search response's HTTP status.
#[napi]
pub fn classify_search(env: Env, http_status_code: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        Ok(retrypolicy::classify_search(http_status(&http_status_code)?))
    })
}

/// Classifies a views response from its HTTP status and body text.
#[napi]
pub fn classify_views(
    env: Env,
    http_status_code: Unknown,
    body: Unknown,
) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let status = http_status(&http_status_code)?;
        Ok(retrypolicy::classify_views(
            status,
            &convert::text(&body, "body")?,
        ))
    })
}

/// Names the reason for a failure the SDK observed itself (`"socket_closed_while_in_flight"`, ...).
#[napi]
pub fn classify_dispatch(env: Env, failure: Unknown) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        Ok(retrypolicy::classify_dispatch(convert::name::<DispatchFailure>(
            &failure, "failure",
        )?))
    })
}
