//! JavaScript values → core values. Every failure is a core error naming the camelCase field the
//! caller wrote; numbers are validated here because napi's own conversions would silently wrap
//! (-1 → 4294967295) or truncate (1.7 → 1).

use std::ffi::CStr;

use napi::sys::{napi_env, napi_value, ValueType};
use retrypolicy::operation::OperationWire;
use retrypolicy::{Error as CoreError, HttpMethod, KvOperation, Request, RetryReason, Service, StrategyKind};

use crate::js::{self, JsResult};

/// Whole milliseconds from a JS number: non-negative, whole, at most 2^53 − 1.
#[inline]
pub fn millis(field: &str, x: f64) -> Result<u64, CoreError> {
    retrypolicy::units::millis_from_f64(field, x)
}

/// A whole number in `0..=max` from a JS number, else `out_of_range` naming `field`.
#[inline]
/// `max` must be below 2^53 (every caller's is at most 2^32 − 1).
pub fn int_in(field: &str, x: f64, max: u64, expected: &str) -> Result<u64, CoreError> {
    // Whole iff the value survives the round trip through i64 (exact below 2^53; `fract` is a
    // libm call and unsigned conversions are long sequences on baseline x86-64).
    retrypolicy::units::whole_number(x, max as f64).ok_or_else(|| out_of_range(field, x, expected))
}

#[cold]
#[inline(never)]
fn out_of_range(field: &str, x: f64, expected: &str) -> CoreError {
    CoreError::OutOfRange {
        field: field.to_owned(),
        value: format_number(x),
        expected: expected.to_owned(),
    }
}

/// A retry count (`attempts`): a whole number in 0..=2^32 − 1.
#[inline]
pub fn count(field: &str, x: f64) -> Result<u32, CoreError> {
    int_in(field, x, u64::from(u32::MAX), "a whole number in 0..=4294967295").map(|n| n as u32)
}

/// What a 16-bit status accepts.
pub const STATUS_EXPECTED: &str = "0..=65535 or a 0x-prefixed hex string";
/// What a 32-bit code accepts.
pub const CODE_EXPECTED: &str = "a whole number in 0..=4294967295";

/// Formats a JS number the way JavaScript prints it (so `-1`, `1.7`, `NaN`, `Infinity`).
pub fn format_number(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_owned()
    } else if x.is_infinite() {
        if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        x.to_string()
    }
}

fn type_name(t: i32) -> &'static str {
    match t {
        ValueType::napi_undefined => "undefined",
        ValueType::napi_null => "null",
        ValueType::napi_boolean => "boolean",
        ValueType::napi_number => "number",
        ValueType::napi_string => "string",
        ValueType::napi_symbol => "symbol",
        ValueType::napi_object => "object",
        ValueType::napi_function => "function",
        ValueType::napi_bigint => "bigint",
        _ => "external",
    }
}

/// An `invalid_type` error for `field`: expected `what`, got the value's JS type.
pub fn wrong_type(env: napi_env, v: napi_value, field: &str, what: &str) -> JsResult<CoreError> {
    let t = js::type_of(env, v)?;
    Ok(CoreError::InvalidType {
        field: field.to_owned(),
        message: format!("expected {what}, got {}", type_name(t)),
    })
}

/// A short rendering of a rejected value for error messages.
fn describe(env: napi_env, v: napi_value) -> JsResult<String> {
    Ok(match js::type_of(env, v)? {
        ValueType::napi_number => format_number(js::get_f64(env, v)?),
        ValueType::napi_string => format!("{:?}", js::get_string(env, v)?),
        t => type_name(t).to_owned(),
    })
}

/// Milliseconds from a number or a BigInt (exact up to 2^64 − 1); anything else is `invalid_duration`.
pub fn millis_value(env: napi_env, v: napi_value, field: &str) -> JsResult<u64> {
    match js::type_of(env, v)? {
        ValueType::napi_number => Ok(millis(field, js::get_f64(env, v)?)?),
        ValueType::napi_bigint => {
            let (negative, fits, low) = js::get_bigint(env, v)?;
            if negative || !fits {
                return Err(CoreError::InvalidDuration {
                    field: field.to_owned(),
                    value: match (negative, fits) {
                        (true, true) => format!("-{low}n"),
                        (true, false) => "a BigInt below -(2^64-1)".to_owned(),
                        _ => "a BigInt past 2^64-1".to_owned(),
                    },
                }
                .into());
            }
            Ok(low)
        }
        ValueType::napi_undefined => Err(CoreError::MissingField {
            field: field.to_owned(),
        }
        .into()),
        _ => Err(CoreError::InvalidDuration {
            field: field.to_owned(),
            value: describe(env, v)?,
        }
        .into()),
    }
}

/// Optional milliseconds: `undefined`/`null` are none.
pub fn opt_millis_value(env: napi_env, v: napi_value, field: &str) -> JsResult<Option<u64>> {
    if js::is_nullish(env, v)? {
        return Ok(None);
    }
    millis_value(env, v, field).map(Some)
}

/// A whole number in `0..=max` from a JS number; other types are `invalid_type`.
pub fn int_value(env: napi_env, v: napi_value, field: &str, max: u64, expected: &str) -> JsResult<u64> {
    if js::type_of(env, v)? != ValueType::napi_number {
        return Err(wrong_type(env, v, field, "a number")?.into());
    }
    Ok(int_in(field, js::get_f64(env, v)?, max, expected)?)
}

/// A count, `undefined` meaning 0.
pub fn count_value(env: napi_env, v: napi_value, field: &str) -> JsResult<u32> {
    if js::type_of(env, v)? == ValueType::napi_undefined {
        return Ok(0);
    }
    Ok(int_value(env, v, field, u64::from(u32::MAX), CODE_EXPECTED)? as u32)
}

/// A 16-bit status: a number, or a `0x`-prefixed hex string (read by the core's JSON rule).
pub fn status_value(env: napi_env, v: napi_value, field: &str) -> JsResult<u16> {
    match js::type_of(env, v)? {
        ValueType::napi_string => {
            #[derive(serde::Deserialize)]
            struct Status(#[serde(with = "retrypolicy::json::status")] u16);
            let text = js::get_string(env, v)?;
            retrypolicy::json::from_json_value::<Status>(&serde_json::Value::String(text))
                .map(|s| s.0)
                .map_err(|e| rename_field(e, field).into())
        }
        _ => Ok(int_value(env, v, field, u64::from(u16::MAX), STATUS_EXPECTED)? as u16),
    }
}

/// The same error, naming `field` instead of the path the JSON reader saw.
fn rename_field(e: CoreError, field: &str) -> CoreError {
    let field = field.to_owned();
    match e {
        CoreError::OutOfRange { value, expected, .. } => CoreError::OutOfRange {
            field,
            value,
            expected,
        },
        CoreError::InvalidType { message, .. } => CoreError::InvalidType { field, message },
        other => other,
    }
}

/// An optional boolean: `undefined`/`null` are none.
pub fn opt_bool_value(env: napi_env, v: napi_value, field: &str) -> JsResult<Option<bool>> {
    match js::type_of(env, v)? {
        ValueType::napi_undefined | ValueType::napi_null => Ok(None),
        ValueType::napi_boolean => Ok(Some(js::get_bool(env, v)?)),
        _ => Err(wrong_type(env, v, field, "a boolean")?.into()),
    }
}

/// A string, else `invalid_type`.
pub fn string_value(env: napi_env, v: napi_value, field: &str) -> JsResult<String> {
    if js::type_of(env, v)? != ValueType::napi_string {
        return Err(wrong_type(env, v, field, "a string")?.into());
    }
    js::get_string(env, v)
}

/// An optional string: `undefined`/`null` are the empty string.
pub fn text_value(env: napi_env, v: napi_value, field: &str) -> JsResult<String> {
    if js::is_nullish(env, v)? {
        return Ok(String::new());
    }
    string_value(env, v, field)
}

/// A snake_case (or UPPERCASE) name of a core enum, parsed by the core.
pub fn name_value<T: serde::de::DeserializeOwned>(env: napi_env, v: napi_value, field: &str) -> JsResult<T> {
    let s = string_value(env, v, field)?;
    Ok(retrypolicy::json::parse_name(field, &s)?)
}

/// A retry reason by name (the RFC table's names and aliases).
pub fn reason_value(env: napi_env, v: napi_value, field: &str) -> JsResult<RetryReason> {
    let s = string_value(env, v, field)?;
    Ok(RetryReason::parse(field, &s)?)
}

fn require_object(env: napi_env, v: napi_value, field: &str) -> JsResult<()> {
    let t = js::type_of(env, v)?;
    if t == ValueType::napi_object || t == ValueType::napi_function {
        Ok(())
    } else {
        Err(wrong_type(env, v, field, "an object")?.into())
    }
}

fn prop(env: napi_env, obj: napi_value, name: &CStr) -> JsResult<Option<napi_value>> {
    let v = js::get_prop(env, obj, name)?;
    Ok(if js::type_of(env, v)? == ValueType::napi_undefined {
        None
    } else {
        Some(v)
    })
}

/// An operation from `{service, operation?, readonly?, method?}`; misplaced and missing fields
/// are reported by the core's own rule (`OperationWire::into_operation`).
pub fn operation_value(env: napi_env, obj: napi_value, field: &str) -> JsResult<retrypolicy::Operation> {
    require_object(env, obj, field)?;
    let service = match prop(env, obj, c"service")? {
        Some(v) => Some(name_value::<Service>(env, v, "service")?),
        None => None,
    };
    let operation = match prop(env, obj, c"operation")? {
        Some(v) => Some(KvOperation::parse(
            "operation",
            &string_value(env, v, "operation")?,
        )?),
        None => None,
    };
    let readonly = match prop(env, obj, c"readonly")? {
        Some(v) => opt_bool_value(env, v, "readonly")?,
        None => None,
    };
    let method = match prop(env, obj, c"method")? {
        Some(v) => Some(name_value::<HttpMethod>(env, v, "method")?),
        None => None,
    };
    let wire = OperationWire {
        service,
        operation,
        readonly,
        method,
    };
    Ok(wire.into_operation("")?)
}

/// A request from its camelCase object form.
pub fn request_value(env: napi_env, obj: napi_value) -> JsResult<Request> {
    let operation = operation_value(env, obj, "request")?;
    let timeout = js::get_prop(env, obj, c"timeoutMs")?;
    let mut r = Request::new(operation, 0, millis_value(env, timeout, "timeoutMs")?);
    if let Some(v) = prop(env, obj, c"elapsedMs")? {
        r.elapsed_ms = millis_value(env, v, "elapsedMs")?;
    }
    r.attempts = count_value(env, js::get_prop(env, obj, c"attempts")?, "attempts")?;
    r.idempotent = opt_bool_value(env, js::get_prop(env, obj, c"idempotent")?, "idempotent")?;
    let strategy = js::get_prop(env, obj, c"strategy")?;
    if !js::is_nullish(env, strategy)? {
        r.strategy = Some(name_value::<StrategyKind>(env, strategy, "strategy")?);
    }
    let random = js::get_prop(env, obj, c"random")?;
    if !js::is_nullish(env, random)? {
        if js::type_of(env, random)? != ValueType::napi_number {
            return Err(wrong_type(env, random, "random", "a number in [0, 1)")?.into());
        }
        r.random = Some(retrypolicy::backoff::check_draw(
            "random",
            js::get_f64(env, random)?,
        )?);
    }
    r.previous_delay_ms = opt_millis_value(
        env,
        js::get_prop(env, obj, c"previousDelayMs")?,
        "previousDelayMs",
    )?;
    let reasons = js::get_prop(env, obj, c"previousReasons")?;
    if !js::is_nullish(env, reasons)? {
        if !js::is_array(env, reasons)? {
            return Err(wrong_type(env, reasons, "previousReasons", "an array of reason names")?.into());
        }
        for i in 0..js::array_len(env, reasons)? {
            let item = js::array_get(env, reasons, i)?;
            r.previous_reasons
                .push(reason_value(env, item, &format!("previousReasons[{i}]"))?);
        }
    }
    Ok(r)
}
