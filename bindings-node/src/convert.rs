//! JavaScript values → core values, each failure a core error naming the camelCase field the
//! caller wrote. Numbers are checked here because napi's own conversions would wrap
//! (-1 → 4294967295) or truncate (1.7 → 1).

use napi::bindgen_prelude::{Array, BigInt, Either, FromNapiValue, JsValue, Unknown, ValueType};
use napi::{check_status, sys};
use retrypolicy::error::shorten;
use retrypolicy::serde_form::ms::MAX_SAFE;
use retrypolicy::units::{millis_from_f64, whole_number};
use retrypolicy::{Error as CoreError, RetryReason};
use serde::de::{value::StrDeserializer, DeserializeOwned, IntoDeserializer};

use crate::errors::{invalid_type, Fail, Res};

/// A JavaScript value to convert. Its type is asked of N-API only when needed: a value of the
/// expected type is read directly (N-API checks the type itself), which saves a call per value.
#[derive(Clone, Copy)]
pub struct Js<'a>(pub Unknown<'a>);

impl Js<'_> {
    /// The value's type.
    pub fn kind(&self) -> Res<ValueType> {
        Ok(self.0.get_type()?)
    }

    /// Whether the value is `undefined`.
    pub fn is_undefined(&self) -> Res<bool> {
        Ok(self.kind()? == ValueType::Undefined)
    }

    /// `f` of the value, or none for `undefined` and `null`.
    pub fn opt<R>(&self, f: impl FnOnce(&Self) -> Res<R>) -> Res<Option<R>> {
        match self.kind()? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => f(self).map(Some),
        }
    }

    /// An `invalid_type` error for `field`: expected `what`, got this value's type.
    pub fn wrong_type(&self, field: &str, what: &str) -> Fail {
        let got = self
            .kind()
            .map_or("unknown".to_owned(), |k| format!("{k:?}").to_lowercase());
        invalid_type(field, format!("expected {what}, got {got}"))
    }

    /// The value as `V` (the caller has checked the type).
    fn cast<V: FromNapiValue>(&self) -> Res<V> {
        // SAFETY: every caller checks the type first.
        Ok(unsafe { self.0.cast::<V>() }?)
    }

    /// The number, or none for another type.
    pub fn as_f64(&self) -> Res<Option<f64>> {
        let (raw, mut x) = (self.0.value(), 0.0);
        // SAFETY: `raw` is a live handle of the current call.
        match unsafe { sys::napi_get_value_double(raw.env, raw.value, &mut x) } {
            sys::Status::napi_number_expected => Ok(None),
            status => Ok(check_status!(status).map(|()| Some(x))?),
        }
    }
}

/// Calls `f` with a string's text; none for `undefined`, `invalid_type` for anything else. Names
/// are read into a stack buffer: napi-rs's `String` conversion cost about 75 ns more per string.
pub fn opt_str<R>(v: &Js, field: &str, f: impl FnOnce(&str) -> Res<R>) -> Res<Option<R>> {
    let (mut buf, mut len, raw) = ([0u8; 64], 0usize, v.0.value());
    let out = buf.as_mut_ptr().cast();
    // SAFETY: the buffer holds `buf.len()` bytes; N-API writes at most that many, NUL included.
    match unsafe { sys::napi_get_value_string_utf8(raw.env, raw.value, out, buf.len(), &mut len) } {
        sys::Status::napi_string_expected if v.is_undefined()? => return Ok(None),
        sys::Status::napi_string_expected => return Err(v.wrong_type(field, "a string")),
        status => check_status!(status)?,
    }
    // N-API never splits a character, so a string that may not have fit is read again whole.
    if len + 4 < buf.len() {
        let text = std::str::from_utf8(&buf[..len]).map_err(|e| invalid_type(field, e.to_string()))?;
        return f(text).map(Some);
    }
    f(&v.cast::<String>()?).map(Some)
}

/// Calls `f` with a string's text, `invalid_type` for anything else.
pub fn with_str<R>(v: &Js, field: &str, f: impl FnOnce(&str) -> Res<R>) -> Res<R> {
    opt_str(v, field, f)?.ok_or_else(|| v.wrong_type(field, "a string"))
}

/// A name of a core enum (snake_case, as in JSON). The typed error comes from the wire layer;
/// a valid name is read directly, without its JSON value and path tracking (about 35 ns).
fn parse_name<T: DeserializeOwned>(field: &str, s: &str) -> Res<T> {
    let direct: StrDeserializer<serde::de::value::Error> = s.into_deserializer();
    T::deserialize(direct).or_else(|_| Ok(retrypolicy_wire::parse_name(field, s)?))
}

/// A name of a core enum.
pub fn name<T: DeserializeOwned>(v: &Js, field: &str) -> Res<T> {
    with_str(v, field, |s| parse_name(field, s))
}

/// An optional name: `undefined` is none.
pub fn opt_name<T: DeserializeOwned>(v: &Js, field: &str) -> Res<Option<T>> {
    opt_str(v, field, |s| parse_name(field, s))
}

/// A JSON enum value's name (`"not_idempotent"`, `"kv"`, `"GET"`).
pub fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A retry reason by name (the RFC table's names and aliases).
pub fn reason(v: &Js, field: &str) -> Res<RetryReason> {
    with_str(v, field, |s| Ok(RetryReason::parse(field, s)?))
}

/// Milliseconds from a number (up to 2^53 − 1) or a bigint (up to 2^64 − 1); `undefined` is
/// `default` when there is one. Another number, bigint or a string is `invalid_duration`; a value
/// of another type (null where milliseconds are required, a boolean, an object) `invalid_type`, as
/// in JSON.
pub fn millis(v: &Js, field: &str, default: Option<u64>) -> Res<u64> {
    if let Some(x) = v.as_f64()? {
        return Ok(millis_from_f64(field, x)?);
    }
    let value = match (v.kind()?, default) {
        (ValueType::BigInt, _) => match v.cast::<BigInt>()? {
            big if !big.sign_bit && big.words.len() == 1 => return Ok(big.words[0]),
            big if big.words.len() == 1 => Some(format!("-{}n", big.words[0])),
            _ => Some("a bigint outside 0..=2^64-1".to_owned()),
        },
        // An optional field given null reads as not given (the fixture contract).
        (ValueType::Undefined | ValueType::Null, Some(ms)) => return Ok(ms),
        (ValueType::Undefined, None) => None,
        (ValueType::String, _) => Some(format!("{:?}", shorten(&v.cast::<String>()?))),
        _ => return Err(v.wrong_type(field, "a whole number of milliseconds")),
    };
    let field = field.to_owned();
    Err(match value {
        None => CoreError::MissingField { field },
        Some(value) => CoreError::InvalidDuration { field, value },
    }
    .into())
}

/// Optional milliseconds: `undefined`/`null` are none.
pub fn opt_millis(v: &Js, field: &str) -> Res<Option<u64>> {
    v.opt(|v| millis(v, field, None))
}

/// Milliseconds out: a number up to 2^53 − 1, an exact bigint past it.
pub fn millis_out(ms: u64) -> Either<f64, BigInt> {
    match ms <= MAX_SAFE {
        true => Either::A(ms as f64),
        false => Either::B(BigInt::from(ms)),
    }
}

/// A whole number in `0..=max` (below 2^53): `undefined` is `default` when there is one, a
/// fraction or a number out of range is `out_of_range`, another type `invalid_type`.
pub fn whole(v: &Js, field: &str, max: u64, default: Option<u64>) -> Res<u64> {
    let x = match (v.as_f64()?, default) {
        (Some(x), _) => x,
        // An optional field given null reads as not given (the fixture contract).
        (None, Some(d)) if v.is_undefined()? || v.kind()? == ValueType::Null => return Ok(d),
        (None, _) => return Err(v.wrong_type(field, "a number")),
    };
    whole_number(x, max as f64).ok_or_else(|| {
        let value = match x {
            x if x.is_infinite() => if x > 0.0 { "Infinity" } else { "-Infinity" }.to_owned(),
            x => x.to_string(),
        };
        let expected = format!("a whole number in 0..={max}");
        CoreError::OutOfRange {
            field: field.to_owned(),
            value,
            expected,
        }
        .into()
    })
}

/// A 32-bit count or code.
pub fn u32_or(v: &Js, field: &str, default: Option<u32>) -> Res<u32> {
    Ok(whole(v, field, u64::from(u32::MAX), default.map(u64::from))? as u32)
}

/// A 16-bit status: a number, or a `0x`-prefixed hex string.
pub fn status(v: &Js, field: &str) -> Res<u16> {
    if v.kind()? == ValueType::String {
        return with_str(v, field, |s| {
            Ok(retrypolicy::serde_form::status::parse_text(field, s)?)
        });
    }
    Ok(whole(v, field, u64::from(u16::MAX), None)? as u16)
}

/// An optional boolean: `undefined`/`null` are none.
pub fn opt_bool(v: &Js, field: &str) -> Res<Option<bool>> {
    match v.kind()? {
        ValueType::Undefined | ValueType::Null => Ok(None),
        ValueType::Boolean => Ok(Some(v.cast()?)),
        _ => Err(v.wrong_type(field, "a boolean")),
    }
}

/// An optional random draw in `[0, 1)`: `undefined`/`null` are none.
pub fn opt_draw(v: &Js, field: &str) -> Res<Option<f64>> {
    v.opt(|v| {
        let x = v
            .as_f64()?
            .ok_or_else(|| v.wrong_type(field, "a number in [0, 1)"))?;
        Ok(retrypolicy::backoff::check_draw(field, x)?)
    })
}

/// The items of an array, `what` naming what it must hold in the `invalid_type` error.
pub fn items<'a>(v: &Js<'a>, field: &str, what: &str) -> Res<Vec<Js<'a>>> {
    if !v.0.is_array()? {
        return Err(v.wrong_type(field, what));
    }
    let array: Array = v.cast()?;
    let item = |i| {
        array
            .get::<Unknown>(i)?
            .ok_or_else(|| napi::Error::from_reason("the array shrank"))
    };
    (0..array.len()).map(|i| Ok(Js(item(i)?))).collect()
}
