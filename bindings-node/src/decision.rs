//! Decisions out and back in. Out: the core's `Decision` is handed, field by field, to the
//! JavaScript layer's constructor, which builds the frozen object (N-API builds objects slowly:
//! nine properties set from Rust cost about 1.2 µs here, the same object in JavaScript 45 ns).
//! In: a decision object read back for the core's formatter and explainer.

use napi::bindgen_prelude::{JsObjectValue, Null, Object, Unknown, ValueType};
use retrypolicy::{Decision, NoRetry, NoRetryCause, RetryAfter, Rule};

use crate::callback::{arg, call};
use crate::convert::{self, kind, millis_out};
use crate::errors::{invalid_type, Fail, Res};

/// The decision as the JavaScript layer's frozen object, built by its constructor `make(retry,
/// delayMs, capped, thenCancel, reason, rule, section, cause, attempts, idempotent)`.
pub fn build<'a>(make: &Unknown<'a>, d: &Decision) -> Res<Unknown<'a>> {
    let args = match d {
        Decision::Retry(r) => [
            arg(make, true)?,
            arg(make, millis_out(r.delay_ms))?,
            arg(make, r.capped)?,
            arg(make, r.then_cancel)?,
            arg(make, r.reason.name())?,
            arg(make, r.rule.name())?,
            arg(make, r.section)?,
            arg(make, Null)?,
            arg(make, r.attempts)?,
            arg(make, r.idempotent)?,
        ],
        Decision::NoRetry(n) => [
            arg(make, false)?,
            arg(make, Null)?,
            arg(make, Null)?,
            arg(make, Null)?,
            arg(make, n.reason.name())?,
            arg(make, n.rule.name())?,
            arg(make, n.section)?,
            arg(make, convert::wire_name(&n.cause))?,
            arg(make, n.attempts)?,
            arg(make, n.idempotent)?,
        ],
    };
    call(make, &args)
}

/// A decision object returned by this package, read back; anything else is `invalid_type` naming `decision`.
pub fn from_object(v: &Unknown) -> Res<Decision> {
    read(v).map_err(|fail| match fail {
        Fail::Core(e) => invalid_type(
            "decision",
            format!("not a decision returned by retrypolicy ({e})"),
        ),
        other => other,
    })
}

fn read(v: &Unknown) -> Res<Decision> {
    if kind(v)? != ValueType::Object {
        return Err(convert::wrong_type(v, "decision", "a decision"));
    }
    // SAFETY: the value is an object.
    let obj: Object = unsafe { v.cast() }?;
    let get = |name: &std::ffi::CStr| obj.get_c_named_property_unchecked::<Unknown>(name);
    let flag = |name: &std::ffi::CStr, field: &str| -> Res<bool> {
        Ok(convert::opt_bool(&get(name)?, field)?.unwrap_or(false))
    };
    let retry = convert::with_str(&get(c"action")?, "action", |s| Ok(s == "retry"))?;
    let reason = convert::reason(&get(c"reason")?, "reason")?;
    let rule: Rule = convert::name(&get(c"rule")?, "rule")?;
    let attempts = convert::count(&get(c"attempts")?, "attempts")?;
    let idempotent = flag(c"idempotent", "idempotent")?;
    Ok(if retry {
        Decision::Retry(RetryAfter {
            delay_ms: convert::millis(&get(c"delayMs")?, "delayMs")?,
            reason,
            rule,
            section: rule.section(),
            capped: flag(c"capped", "capped")?,
            then_cancel: flag(c"thenCancel", "thenCancel")?,
            attempts,
            idempotent,
        })
    } else {
        let cause: NoRetryCause = convert::name(&get(c"cause")?, "cause")?;
        Decision::NoRetry(NoRetry {
            reason,
            cause,
            rule,
            section: rule.section(),
            attempts,
            idempotent,
        })
    })
}
