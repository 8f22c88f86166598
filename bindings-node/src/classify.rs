//! Classification: what happened (a status, a code, a failure) → the reason to hand to `decide`.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::{Classification, KvOperation};

use crate::convert::{self, Js};
use crate::errors::{run, Res};
use crate::objects::ObjectHandle;
use crate::policy::{self, PolicyHandle};

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

/// Runs a classifier, mapping its errors and its answer.
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

/// Classifies a KV status (a number or a `"0x.."` string) for a KV operation name.
#[napi(catch_unwind)]
pub fn classify_kv(
    env: Env,
    operation: Unknown,
    status: Unknown,
    error_map: Option<&ObjectHandle>,
    policy: Option<&PolicyHandle>,
) -> napi::Result<ClassificationObject> {
    classified(&env, || {
        let op = convert::with_str(&Js(operation), "operation", |s| {
            Ok(KvOperation::parse("operation", s)?)
        })?;
        let status = convert::status(&Js(status), "status")?;
        let compat = &policy::or_default(policy).compat;
        let map = error_map.map(ObjectHandle::lend).transpose()?;
        Ok(retrypolicy::classify_kv(
            op,
            status,
            map.as_deref().and_then(|m| m.error_map()),
            compat,
        ))
    })
}
