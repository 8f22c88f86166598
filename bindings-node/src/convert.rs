//! JavaScript values → core values, each failure a core error naming the camelCase field the
//! caller wrote. Numbers are checked here because napi's own conversions would wrap
//! (-1 → 4294967295) or truncate (1.7 → 1).

use napi::bindgen_prelude::{Array, BigInt, Either, JsValue, Unknown, ValueType};
use napi::{check_status, sys};
use retrypolicy::serde_form::ms::MAX_SAFE;
use retrypolicy::units::{millis_from_f64, whole_number};
use retrypolicy::{Error as CoreError, RetryReason};
use serde::de::DeserializeOwned;

use crate::errors::{invalid_type, Fail, Res};

/// What a 32-bit count or code accepts.
pub const U32_EXPECTED: &str = "a whole number in 0..=4294967295";

/// The value's JavaScript type.
pub fn kind(v: &Unknown) -> Res<ValueType> {
    Ok(v.get_type()?)
}

/// Whether the value is `undefined` or `null`.
pub fn is_nullish(v: &Unknown) -> Res<bool> {
    Ok(matches!(kind(v)?, ValueType::Undefined | ValueType::Null))
}

fn type_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "boolean",
        ValueType::Number => "number",
        ValueType::String => "string",
        ValueType::Symbol => "symbol",
        ValueType::Function => "function",
        ValueType::BigInt => "bigint",
        _ => "object",
    }
}

/// An `invalid_type` error for `field`: expected `what`, got the value's JavaScript type.
pub fn wrong_type(v: &Unknown, field: &str, what: &str) -> Fail {
    match kind(v) {
        Ok(t) => invalid_type(field, format!("expected {what}, got {}", type_name(t))),
        Err(fail) => fail,
    }
}

/// A number the way JavaScript prints it (`-1`, `1.7`, `NaN`, `Infinity`).
fn js_number(x: f64) -> String {
    match x {
        x if x.is_nan() => "NaN".to_owned(),
        x if x.is_infinite() => if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned(),
        x => x.to_string(),
    }
}

/// A number's value, `invalid_type` for anything else.
pub fn number(v: &Unknown, field: &str, what: &str) -> Res<f64> {
    if kind(v)? != ValueType::Number {
        return Err(wrong_type(v, field, what));
    }
    // SAFETY: the value is a number.
    Ok(unsafe { v.cast::<f64>() }?)
}

/// Calls `f` with a string's text, `invalid_type` for anything else. Names are read into a
/// stack buffer: napi-rs's `String` conversion cost about 75 ns more per string here.
pub fn with_str<R>(v: &Unknown, field: &str, f: impl FnOnce(&str) -> Res<R>) -> Res<R> {
    if kind(v)? != ValueType::String {
        return Err(wrong_type(v, field, "a string"));
    }
    let mut buf = [0u8; 64];
    let mut len = 0usize;
    let raw = v.value();
    // SAFETY: the buffer holds `buf.len()` bytes; N-API writes at most that many, NUL included.
    check_status!(unsafe {
        sys::napi_get_value_string_utf8(raw.env, raw.value, buf.as_mut_ptr().cast(), buf.len(), &mut len)
    })?;
    // N-API never splits a character, so a string that may not have fit is read again whole.
    if len + 4 < buf.len() {
        let text = std::str::from_utf8(&buf[..len]).map_err(|e| invalid_type(field, e.to_string()))?;
        return f(text);
    }
    // SAFETY: the value is a string.
    let text: String = unsafe { v.cast() }?;
    f(&text)
}

/// A string's text, `undefined`/`null` being the empty string.
pub fn text(v: &Unknown, field: &str) -> Res<String> {
    if is_nullish(v)? {
        return Ok(String::new());
    }
    with_str(v, field, |s| Ok(s.to_owned()))
}

/// A name of a core enum (snake_case, as in JSON), parsed by the wire layer.
pub fn name<T: DeserializeOwned>(v: &Unknown, field: &str) -> Res<T> {
    with_str(v, field, |s| Ok(retrypolicy_wire::parse_name(field, s)?))
}

/// A JSON enum value's name (`"not_idempotent"`, `"kv"`, `"GET"`).
pub fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A retry reason by name (the RFC table's names and aliases).
pub fn reason(v: &Unknown, field: &str) -> Res<RetryReason> {
    with_str(v, field, |s| Ok(RetryReason::parse(field, s)?))
}

/// Milliseconds from a number (up to 2^53 − 1) or a bigint (up to 2^64 − 1).
pub fn millis(v: &Unknown, field: &str) -> Res<u64> {
    let invalid = |value: String| {
        Fail::Core(CoreError::InvalidDuration {
            field: field.to_owned(),
            value,
        })
    };
    match kind(v)? {
        // SAFETY: the value is a number.
        ValueType::Number => Ok(millis_from_f64(field, unsafe { v.cast::<f64>() }?)?),
        ValueType::BigInt => {
            // SAFETY: the value is a bigint.
            let big: BigInt = unsafe { v.cast() }?;
            match big.get_u64() {
                (false, ms, true) => Ok(ms),
                _ if big.sign_bit && big.words.len() == 1 => Err(invalid(format!("-{}n", big.words[0]))),
                _ => Err(invalid("a bigint outside 0..=2^64-1".to_owned())),
            }
        }
        ValueType::Undefined => Err(Fail::Core(CoreError::MissingField {
            field: field.to_owned(),
        })),
        // SAFETY (string): the value is a string.
        ValueType::String => Err(invalid(format!(
            "{:?}",
            retrypolicy::error::shorten(&unsafe { v.cast::<String>() }?)
        ))),
        t => Err(invalid(type_name(t).to_owned())),
    }
}

/// Optional milliseconds: `undefined`/`null` are none.
pub fn opt_millis(v: &Unknown, field: &str) -> Res<Option<u64>> {
    if is_nullish(v)? {
        return Ok(None);
    }
    millis(v, field).map(Some)
}

/// Milliseconds out: a number up to 2^53 − 1, an exact bigint past it.
pub fn millis_out(ms: u64) -> Either<f64, BigInt> {
    if ms <= MAX_SAFE {
        Either::A(ms as f64)
    } else {
        Either::B(BigInt::from(ms))
    }
}

/// A whole number in `0..=max` (below 2^53), `out_of_range` otherwise, `invalid_type` for a non-number.
pub fn whole(v: &Unknown, field: &str, max: u64, expected: &str) -> Res<u64> {
    let x = number(v, field, "a number")?;
    whole_number(x, max as f64).ok_or_else(|| {
        Fail::Core(CoreError::OutOfRange {
            field: field.to_owned(),
            value: js_number(x),
            expected: expected.to_owned(),
        })
    })
}

/// A 32-bit count or code.
pub fn u32_value(v: &Unknown, field: &str) -> Res<u32> {
    Ok(whole(v, field, u64::from(u32::MAX), U32_EXPECTED)? as u32)
}

/// A retry count, `undefined` meaning 0.
pub fn count(v: &Unknown, field: &str) -> Res<u32> {
    if kind(v)? == ValueType::Undefined {
        return Ok(0);
    }
    u32_value(v, field)
}

/// A 16-bit status: a number, or a `0x`-prefixed hex string.
pub fn status(v: &Unknown, field: &str) -> Res<u16> {
    if kind(v)? == ValueType::String {
        return with_str(v, field, |s| {
            Ok(retrypolicy::serde_form::status::parse_text(field, s)?)
        });
    }
    let expected = retrypolicy::serde_form::STATUS_EXPECTED;
    Ok(whole(v, field, u64::from(u16::MAX), expected)? as u16)
}

/// An optional boolean: `undefined`/`null` are none.
pub fn opt_bool(v: &Unknown, field: &str) -> Res<Option<bool>> {
    match kind(v)? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        // SAFETY: the value is a boolean.
        ValueType::Boolean => Ok(Some(unsafe { v.cast::<bool>() }?)),
        _ => Err(wrong_type(v, field, "a boolean")),
    }
}

/// An optional random draw in `[0, 1)`: `undefined`/`null` are none.
pub fn opt_draw(v: &Unknown, field: &str) -> Res<Option<f64>> {
    if is_nullish(v)? {
        return Ok(None);
    }
    let r = number(v, field, "a number in [0, 1)")?;
    Ok(Some(retrypolicy::backoff::check_draw(field, r)?))
}

/// The items of an array, `what` naming what it must hold in the `invalid_type` error.
pub fn items<'a>(v: &Unknown<'a>, field: &str, what: &str) -> Res<Vec<Unknown<'a>>> {
    if !v.is_array()? {
        return Err(wrong_type(v, field, what));
    }
    // SAFETY: the value is an array.
    let array: Array = unsafe { v.cast() }?;
    let mut out = Vec::with_capacity(array.len() as usize);
    for i in 0..array.len() {
        out.push(
            array
                .get::<Unknown>(i)?
                .ok_or_else(|| napi::Error::from_reason("array hole"))?,
        );
    }
    Ok(out)
}
