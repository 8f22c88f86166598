//! Python values → core values: durations, counts, draws, reasons, names. Errors name the field.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use retrypolicy::{Error, RetryReason};

use crate::error::IntoPy;

fn invalid_type(field: &str, what: &str, v: &Bound<'_, PyAny>) -> PyErr {
    let ty = v.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    crate::error::to_py(Error::InvalidType {
        field: field.to_owned(),
        message: format!("expected {what}, got {ty}"),
    })
}

/// A duration given as `datetime.timedelta` or seconds (int or float) → whole milliseconds.
pub fn duration_ms(field: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    if v.is_instance_of::<PyBool>() {
        return Err(invalid_type(field, "a timedelta or seconds", v));
    }
    let secs: f64 = if v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>() {
        v.extract()
            .map_err(|_| invalid_type(field, "a timedelta or seconds", v))?
    } else if let Ok(total) = v.call_method0(pyo3::intern!(v.py(), "total_seconds")) {
        total
            .extract()
            .map_err(|_| invalid_type(field, "a timedelta or seconds", v))?
    } else {
        return Err(invalid_type(field, "a timedelta or seconds", v));
    };
    retrypolicy::units::millis_from_secs(field, secs).py()
}

/// A non-negative count that fits 32 bits (bools are refused).
pub fn count_u32(field: &str, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(invalid_type(field, "an int", v));
    }
    v.extract::<u32>().map_err(|_| {
        crate::error::to_py(Error::OutOfRange {
            field: field.to_owned(),
            value: v.to_string(),
            expected: "0..=4294967295".to_owned(),
        })
    })
}

/// An integer that fits `T` (bools are refused), else `out_of_range` naming the field.
pub fn int_in<T: TryFrom<u64>>(field: &str, v: &Bound<'_, PyAny>, expected: &str) -> PyResult<T> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(invalid_type(field, "an int", v));
    }
    v.extract::<u64>()
        .ok()
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| {
            crate::error::to_py(Error::OutOfRange {
                field: field.to_owned(),
                value: v.to_string(),
                expected: expected.to_owned(),
            })
        })
}

/// A random draw in [0, 1).
pub fn draw(field: &str, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    if v.is_instance_of::<PyBool>() || !(v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>()) {
        return Err(invalid_type(field, "a float in [0, 1)", v));
    }
    let r: f64 = v.extract()?;
    retrypolicy::backoff::check_draw(field, r).py()
}

/// A reason given as a `RetryReason` member (an int) or its name.
pub fn reason(field: &str, v: &Bound<'_, PyAny>) -> PyResult<RetryReason> {
    // The hot path: a RetryReason member is an int subclass; read it without building errors.
    if v.is_instance_of::<PyInt>() && !v.is_instance_of::<PyBool>() {
        if let Some(r) = v.extract::<usize>().ok().and_then(|i| RetryReason::ALL.get(i)) {
            return Ok(*r);
        }
        return Err(crate::error::to_py(Error::UnknownReason {
            field: field.to_owned(),
            value: v.to_string(),
        }));
    }
    if v.is_instance_of::<PyString>() {
        let s: std::borrow::Cow<'_, str> = v.extract()?;
        return RetryReason::parse(field, &s).py();
    }
    Err(invalid_type(field, "a RetryReason or its name", v))
}

/// A snake_case name parsed into a core enum.
pub fn name<T: serde::de::DeserializeOwned>(field: &str, v: &Bound<'_, PyAny>) -> PyResult<T> {
    let s = v
        .cast::<PyString>()
        .map_err(|_| invalid_type(field, "a name (str)", v))?;
    retrypolicy::json::parse_name(field, &s.to_cow()?).py()
}

/// An optional bool (None keeps the default).
pub fn opt_bool(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    if v.is_none() {
        return Ok(None);
    }
    if !v.is_instance_of::<PyBool>() {
        return Err(invalid_type(field, "a bool or None", v));
    }
    Ok(Some(v.extract()?))
}
