//! JavaScript values into the core's scalar types: milliseconds (a number up to 2^53 − 1 or a
//! bigint up to 2^64 − 1), whole numbers, strings, booleans, names and reasons. Every rejection is
//! the core's typed error naming the JavaScript field.

use js_sys::{Array, BigInt};
use retrypolicy::error::shorten;
use retrypolicy::serde_form::ms::MAX_SAFE;
use retrypolicy::{Error, RetryReason};
use serde::de::DeserializeOwned;
use wasm_bindgen::convert::TryFromJsValue;
use wasm_bindgen::prelude::*;

/// A JavaScript value as an error message echoes it, read without calling any JavaScript code
/// (a number, a string cut short, a bigint, else its type).
fn shown(v: &JsValue) -> String {
    if let Some(x) = v.as_f64() {
        x.to_string()
    } else if let Some(s) = v.as_string() {
        format!("{:?}", shorten(&s))
    } else if let Some(n) = v.dyn_ref::<BigInt>().and_then(|n| n.to_string(10).ok()) {
        format!("{}n", shorten(&String::from(n)))
    } else if v.is_null() {
        "null".to_owned()
    } else {
        v.js_typeof().as_string().unwrap_or_default()
    }
}

/// The core's `invalid_type` error for `value` at `field`, which should have been `expected`.
pub fn invalid_type(field: &str, expected: &str, value: &JsValue) -> Error {
    let message = format!("expected {expected}, found {}", shown(value));
    Error::InvalidType {
        field: field.to_owned(),
        message,
    }
}

/// `v`, unless it is undefined: `missing_field` naming `field`, as a key left out of JSON is.
pub fn required(v: JsValue, field: &str) -> Result<JsValue, Error> {
    match v.is_undefined() {
        true => Err(Error::MissingField {
            field: field.to_owned(),
        }),
        false => Ok(v),
    }
}

/// `None` for undefined or null, else what `read` makes of the value.
pub fn optional<T>(
    v: &JsValue,
    field: &str,
    read: impl FnOnce(&JsValue, &str) -> Result<T, Error>,
) -> Result<Option<T>, Error> {
    if v.is_null_or_undefined() {
        Ok(None)
    } else {
        read(v, field).map(Some)
    }
}

/// Milliseconds: a whole number up to 2^53 − 1, or a bigint up to 2^64 − 1. Another number,
/// bigint or a string is `invalid_duration`; a value of another type (null, a boolean, an object)
/// `invalid_type`, as in JSON.
pub fn millis(v: &JsValue, field: &str) -> Result<u64, Error> {
    if v.is_undefined() {
        return Err(Error::MissingField {
            field: field.to_owned(),
        });
    }
    if v.as_f64().is_none() && !v.is_bigint() && !v.is_string() {
        return Err(invalid_type(field, "a whole number of milliseconds", v));
    }
    let field = field.to_owned();
    let ms = match v.as_f64() {
        Some(x) => (x >= 0.0 && x <= MAX_SAFE as f64 && x.fract() == 0.0).then_some(x as u64),
        None => u64::try_from_js_value_ref(v),
    };
    ms.ok_or_else(|| Error::InvalidDuration {
        field,
        value: shown(v),
    })
}

/// A whole number in `0..=max`.
pub fn count(v: &JsValue, field: &str, max: u32) -> Result<u32, Error> {
    let x = v.as_f64().ok_or_else(|| invalid_type(field, "a number", v))?;
    if x >= 0.0 && x <= f64::from(max) && x.fract() == 0.0 {
        return Ok(x as u32);
    }
    let (field, value, expected) = (field.to_owned(), shown(v), format!("a whole number in 0..={max}"));
    Err(Error::OutOfRange {
        field,
        value,
        expected,
    })
}

/// A number (the core checks its range where it has one, such as a draw's [0, 1)).
pub fn number(v: &JsValue, field: &str) -> Result<f64, Error> {
    v.as_f64().ok_or_else(|| invalid_type(field, "a number", v))
}

/// A string.
pub fn text(v: &JsValue, field: &str) -> Result<String, Error> {
    v.as_string().ok_or_else(|| invalid_type(field, "a string", v))
}

/// A boolean.
pub fn flag(v: &JsValue, field: &str) -> Result<bool, Error> {
    v.as_bool().ok_or_else(|| invalid_type(field, "a boolean", v))
}

/// A snake_case name of the core's (a service, a strategy, a dispatch failure, ...).
pub fn name<T: DeserializeOwned>(v: &JsValue, field: &str) -> Result<T, Error> {
    retrypolicy_wire::parse_name(field, &text(v, field)?)
}

/// A retry reason by name (aliases accepted).
pub fn reason(v: &JsValue, field: &str) -> Result<RetryReason, Error> {
    RetryReason::parse(field, &text(v, field)?)
}

/// An array of retry reasons, each named by its index in the field (`previousReasons[1]`).
pub fn reasons(v: &JsValue, field: &str) -> Result<Vec<RetryReason>, Error> {
    let array = v
        .dyn_ref::<Array>()
        .ok_or_else(|| invalid_type(field, "an array", v))?;
    let item = |(i, x): (usize, JsValue)| reason(&x, &format!("{field}[{i}]"));
    array.iter().enumerate().map(item).collect()
}
