//! Decisions out and back in. Out: the core's `Decision` is handed, field by field, to the
//! JavaScript layer's constructor, which builds the frozen object (N-API builds objects slowly:
//! nine properties set from Rust cost about 1.2 µs here, the same object in JavaScript 45 ns).
//! In: a decision object read back for the core's formatter and explainer.

use napi::bindgen_prelude::{JsObjectValue, Object, Unknown, ValueType};
use retrypolicy::{Decision, NoRetry, RetryAfter, Rule};

use crate::callback::{arg, call, name_arg};
use crate::convert::{self, millis_out, Js};
use crate::errors::{invalid_type, Fail, Res};

/// The decision as the JavaScript layer's frozen object, built by its constructor `make(retry,
/// delayMs, capped, thenCancel, reason, rule, section, cause, attempts, idempotent)`.
pub fn build<'a>(make: &Unknown<'a>, d: &Decision) -> Res<Unknown<'a>> {
    let (delay, capped, then_cancel, cause, attempts, idempotent) = match d {
        Decision::Retry(r) => (
            Some(r.delay_ms),
            r.capped,
            r.then_cancel,
            None,
            r.attempts,
            r.idempotent,
        ),
        Decision::NoRetry(n) => (
            None,
            false,
            false,
            Some(convert::wire_name(&n.cause)),
            n.attempts,
            n.idempotent,
        ),
    };
    let args = [
        arg(make, d.is_retry())?,
        arg(make, delay.map(millis_out))?,
        arg(make, capped)?,
        arg(make, then_cancel)?,
        name_arg(make, d.reason().name())?,
        name_arg(make, d.rule().name())?,
        name_arg(make, d.section())?,
        arg(make, cause)?,
        arg(make, attempts)?,
        arg(make, idempotent)?,
    ];
    call(make, &args)
}

/// A decision object returned by this package, read back; anything else is `invalid_type` naming `decision`.
pub fn from_object(v: Unknown) -> Res<Decision> {
    read(v).map_err(|fail| match fail {
        Fail::Core(e) => invalid_type(
            "decision",
            format!("not a decision returned by retrypolicy ({e})"),
        ),
        other => other,
    })
}

fn read(v: Unknown) -> Res<Decision> {
    if Js(v).kind()? != ValueType::Object {
        return Err(Js(v).wrong_type("decision", "a decision"));
    }
    // SAFETY: the value is an object.
    let obj: Object = unsafe { v.cast() }?;
    let get = |name: &std::ffi::CStr| Ok::<_, Fail>(Js(obj.get_c_named_property_unchecked::<Unknown>(name)?));
    let flag = |name: &std::ffi::CStr| Ok::<_, Fail>(convert::opt_bool(&get(name)?, "")?.unwrap_or(false));
    let reason = convert::reason(&get(c"reason")?, "reason")?;
    let rule: Rule = convert::name(&get(c"rule")?, "rule")?;
    let (section, attempts) = (
        rule.section(),
        convert::u32_or(&get(c"attempts")?, "attempts", Some(0))?,
    );
    let idempotent = flag(c"idempotent")?;
    Ok(
        match convert::with_str(&get(c"action")?, "action", |s| Ok(s == "retry"))? {
            true => Decision::Retry(RetryAfter {
                delay_ms: convert::millis(&get(c"delayMs")?, "delayMs")?,
                capped: flag(c"capped")?,
                then_cancel: flag(c"thenCancel")?,
                reason,
                rule,
                section,
                attempts,
                idempotent,
            }),
            false => Decision::NoRetry(NoRetry {
                cause: convert::name(&get(c"cause")?, "cause")?,
                reason,
                rule,
                section,
                attempts,
                idempotent,
            }),
        },
    )
}
