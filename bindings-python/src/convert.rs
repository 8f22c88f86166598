//! Python values ↔ core values: durations, counts, integers, draws, names, flags, JSON text.
//! Errors name the field.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use retrypolicy::Error;

use crate::errors::{invalid_type, CoreError, IntoPy};

/// The `invalid_type` exception for `v` at `field`, naming what was expected and `v`'s type.
pub fn wrong_type(field: &str, what: &str, v: &Bound<'_, PyAny>) -> PyErr {
    invalid_type(field, format!("expected {what}, got {}", type_name(v)))
}

/// The name of `v`'s type.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type().name().map(|n| n.to_string()).unwrap_or_default()
}

/// `datetime.timedelta`, looked up once.
static TIMEDELTA: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// The `datetime.timedelta` class.
fn timedelta_class(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    TIMEDELTA.get_or_try_init(py, || {
        py.import("datetime")?.getattr("timedelta").map(Bound::unbind)
    })
}

/// A `datetime.timedelta` of `ms` milliseconds.
pub fn timedelta(py: Python<'_>, ms: u64) -> PyResult<Py<PyAny>> {
    let cls = timedelta_class(py)?;
    let kwargs = PyDict::new(py);
    kwargs.set_item(pyo3::intern!(py, "milliseconds"), ms)?;
    Ok(cls.bind(py).call((), Some(&kwargs))?.unbind())
}

/// `v` as an error message echoes it: its `str()`, cut short (a failing `str()` is described instead).
pub fn echo(v: &Bound<'_, PyAny>) -> String {
    // str() of an int past 4300 digits raises ValueError (CPython's conversion limit).
    match v.str() {
        Ok(s) => retrypolicy::error::shorten(&s.to_string_lossy()),
        Err(_) => format!("(a {} whose str() failed)", type_name(v)),
    }
}

/// A duration given as `datetime.timedelta` or seconds (int or float) → whole milliseconds,
/// rounded to nearest. A timedelta and an int convert exactly (no float in between); negative
/// durations, however small, are `invalid_duration`.
pub fn duration_ms(field: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    let bad = || -> PyErr {
        CoreError(Error::InvalidDuration {
            field: field.to_owned(),
            value: echo(v),
        })
        .into()
    };
    if v.is_instance_of::<PyBool>() {
        return Err(wrong_type(field, "a timedelta or seconds", v));
    }
    if v.is_instance_of::<PyFloat>() {
        return retrypolicy::units::millis_from_secs(field, v.extract()?).py();
    }
    let micros: i128 = if v.is_instance_of::<PyInt>() {
        let secs: i128 = v.extract().map_err(|_| bad())?;
        secs.checked_mul(1_000_000).ok_or_else(bad)?
    } else if v.is_instance(timedelta_class(v.py())?.bind(v.py()))? {
        // Its three exact fields (the limited API has no timedelta accessors).
        let part = |name: &str| -> PyResult<i128> { v.getattr(name)?.extract::<i64>().map(i128::from) };
        part("days")? * 86_400_000_000 + part("seconds")? * 1_000_000 + part("microseconds")?
    } else {
        return Err(wrong_type(field, "a timedelta or seconds", v));
    };
    retrypolicy::units::millis_from_micros(field, micros).map_err(|_| bad())
}

/// An optional duration: None stays None.
pub fn opt_duration_ms(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
    if v.is_none() {
        return Ok(None);
    }
    duration_ms(field, v).map(Some)
}

/// A non-negative count that fits 32 bits (bools are refused).
pub fn count_u32(field: &str, v: &Bound<'_, PyAny>) -> PyResult<u32> {
    int_in(field, v, "0..=4294967295")
}

/// An integer that fits `T` (bools are refused), else `out_of_range` naming the field (a float
/// too, as a fraction is in JSON and JavaScript, which have one number type).
pub fn int_in<T: TryFrom<u64>>(field: &str, v: &Bound<'_, PyAny>, expected: &str) -> PyResult<T> {
    let float = v.is_instance_of::<PyFloat>();
    if v.is_instance_of::<PyBool>() || !(v.is_instance_of::<PyInt>() || float) {
        return Err(wrong_type(field, "an int", v));
    }
    v.extract::<u64>()
        .ok()
        .filter(|_| !float)
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| {
            CoreError(Error::OutOfRange {
                field: field.to_owned(),
                value: echo(v),
                expected: expected.to_owned(),
            })
            .into()
        })
}

/// A random draw in [0, 1); None stays None.
pub fn opt_draw(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if v.is_none() {
        return Ok(None);
    }
    if v.is_instance_of::<PyBool>() || !(v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>()) {
        return Err(wrong_type(field, "a float in [0, 1)", v));
    }
    let r: f64 = v.extract()?;
    retrypolicy::backoff::check_draw(field, r).py().map(Some)
}

/// The UTF-8 text of a `str`; one holding a lone surrogate (which UTF-8 cannot encode) is
/// `invalid_type` naming `field`.
pub fn utf8<'a>(field: &str, s: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    s.to_cow()
        .map_err(|_| invalid_type(field, "expected a str without lone surrogates".to_owned()))
}

/// A `str` argument as owned text (other types are `invalid_type` naming `field`).
pub fn text(field: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    let s = v.cast::<PyString>().map_err(|_| wrong_type(field, "a str", v))?;
    Ok(utf8(field, s)?.into_owned())
}

/// A snake_case name (`str`) parsed into a core enum.
pub fn name<T: serde::de::DeserializeOwned>(field: &str, v: &Bound<'_, PyAny>) -> PyResult<T> {
    let s = v
        .cast::<PyString>()
        .map_err(|_| wrong_type(field, "a name (str)", v))?;
    retrypolicy_wire::parse_name(field, &utf8(field, s)?).py()
}

/// An optional name: None stays None.
pub fn opt_name<T: serde::de::DeserializeOwned>(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<T>> {
    if v.is_none() {
        return Ok(None);
    }
    name(field, v).map(Some)
}

/// An optional bool (None keeps the default).
pub fn opt_bool(field: &str, v: &Bound<'_, PyAny>) -> PyResult<Option<bool>> {
    if v.is_none() {
        return Ok(None);
    }
    if !v.is_instance_of::<PyBool>() {
        return Err(wrong_type(field, "a bool or None", v));
    }
    Ok(Some(v.extract()?))
}

/// JSON text read into a core type with the wire layer's typed errors.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> PyResult<T> {
    retrypolicy_wire::from_json_str(text).py()
}

/// A serializable core value as compact JSON text.
pub fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// A core enum's snake_case name, as it serializes.
pub fn name_of<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A JSON-shaped Python value (a dict of a document or snapshot) as JSON text, through
/// `retrypolicy._json_api.dumps` (NaN, infinities, non-JSON values, cycles and nesting past 128
/// levels are typed errors, named under `prefix`).
pub fn dumps(prefix: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = DUMPS.get_or_try_init(v.py(), || {
        v.py()
            .import("retrypolicy._json_api")?
            .getattr("dumps")
            .map(Bound::unbind)
    })?;
    f.bind(v.py()).call1((v, prefix))?.extract()
}

/// JSON text as Python values (`json.loads`).
fn loads(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = LOADS.get_or_try_init(py, || py.import("json")?.getattr("loads").map(Bound::unbind))?;
    Ok(f.bind(py).call1((text,))?.unbind())
}

/// A serializable core value as Python values (dicts, lists, numbers, text), through its JSON form.
pub fn to_py_json<T: serde::Serialize>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    loads(py, &to_json(value))
}

/// A JSON-shaped Python value read into a core type, its errors naming fields under `prefix`
/// (`budget.max_tokens`, `state.balance`).
pub fn from_py_json<T: serde::de::DeserializeOwned>(prefix: &str, v: &Bound<'_, PyAny>) -> PyResult<T> {
    retrypolicy_wire::from_json_str(&dumps(prefix, v)?)
        .map_err(|e| {
            let placed = match e.field() {
                "" => prefix.to_owned(),
                field => format!("{prefix}.{field}"),
            };
            e.with_field(&placed)
        })
        .py()
}

/// A required JSON-shaped value read into a core type (as `from_py_json`): None is `missing_field`
/// naming `field`, as a JSON null or an absent key is (a snapshot to restore, not a fresh state).
pub fn required_json<T: serde::de::DeserializeOwned>(field: &str, v: &Bound<'_, PyAny>) -> PyResult<T> {
    if v.is_none() {
        return Err(crate::errors::CoreError(retrypolicy::Error::MissingField {
            field: field.to_owned(),
        })
        .into());
    }
    from_py_json(field, v)
}

/// A point on the caller's clock, in whole milliseconds (a non-negative int); a number or text
/// that is none is `invalid_duration` naming `field`, another type (None, a bool, a list)
/// `invalid_type`, as a `*_ms` value is in JSON.
pub fn now_ms(field: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    let number_or_text = !v.is_instance_of::<PyBool>()
        && (v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyString>());
    if !number_or_text {
        return Err(wrong_type(field, "a whole number of milliseconds (int)", v));
    }
    let ms = if v.is_instance_of::<PyInt>() {
        v.extract::<u64>().ok()
    } else {
        None
    };
    ms.ok_or_else(|| {
        CoreError(Error::InvalidDuration {
            field: field.to_owned(),
            value: echo(v),
        })
        .into()
    })
}

/// The `#[pymethods]` of a frozen class wrapping a serializable core value in its `inner` field:
/// a getter per listed field (copied from `inner`, documented by the doc comments given), the
/// methods that follow the braces, `to_json` (the core's JSON form) and `__repr__`.
macro_rules! core_wrapper {
    ($class:ident { $( $(#[$doc:meta])* $field:ident: $ty:ty ),* $(,)? } $($methods:tt)*) => {
        #[pymethods]
        impl $class {
            $(
                $(#[$doc])*
                #[getter]
                fn $field(&self) -> $ty {
                    self.inner.$field
                }
            )*
            $($methods)*
            /// The value as JSON (the JSON API's form).
            fn to_json(&self) -> String {
                $crate::convert::to_json(&self.inner)
            }
            /// `<class>(<JSON form>)`.
            fn __repr__(&self) -> String {
                format!("{}({})", stringify!($class), self.to_json())
            }
        }
    };
}
pub(crate) use core_wrapper;
