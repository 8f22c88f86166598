//! Classification: what happened (a status, a code, a failure) → the reason to hand to `decide`.

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::KvOperation;

use crate::convert::{self, Js};
use crate::errors::{invalid_type, run};
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

/// Classifies with the classifier named `kind`: `kv` (KV operation name, status as a number or a
/// `"0x.."` string), `query` (error code, message), `analytics` (error code), `search` (HTTP
/// status), `views` (HTTP status, body text) or `dispatch` (the name of a failure the SDK observed).
#[napi(catch_unwind)]
pub fn classify(
    env: Env,
    kind: Unknown,
    a: Unknown,
    b: Unknown,
    error_map: Option<&ErrorMapHandle>,
    policy: Option<&PolicyHandle>,
) -> napi::Result<ClassificationObject> {
    run(&env, || {
        let (a, b, compat) = (Js(a), Js(b), &policy::or_default(policy).compat);
        let code = || convert::u32_or(&a, "code", None);
        let http_status = || convert::whole(&a, "httpStatus", u64::from(u16::MAX), None).map(|s| s as u16);
        let c = convert::with_str(&Js(kind), "kind", |kind| {
            Ok(match kind {
                "kv" => {
                    let op = convert::with_str(&a, "operation", |s| Ok(KvOperation::parse("operation", s)?))?;
                    let status = convert::status(&b, "status")?;
                    retrypolicy::classify_kv(op, status, error_map.map(|h| &h.map), compat)
                }
                "query" => retrypolicy::classify_query(code()?, &convert::text(&b, "message")?, compat),
                "analytics" => retrypolicy::classify_analytics(code()?),
                "search" => retrypolicy::classify_search(http_status()?),
                "views" => retrypolicy::classify_views(http_status()?, &convert::text(&b, "body")?),
                "dispatch" => retrypolicy::classify_dispatch(convert::name(&a, "failure")?),
                other => return Err(invalid_type("kind", format!("no classifier {other:?}"))),
            })
        })?;
        Ok(ClassificationObject {
            reason: c.reason.map(|r| r.name()),
            rule: c.rule,
            section: c.section,
            surface_as: c.surface_as,
        })
    })
}
