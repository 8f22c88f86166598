//! Failures of an export: a core error, thrown as a JavaScript `Error` carrying the core's stable
//! `code` and the `field` it names, or a napi failure (often a JavaScript exception already
//! pending, from a throwing getter or strategy, which then propagates unchanged).

use napi::bindgen_prelude::{Env, JsObjectValue};
use napi::{Error as NapiError, Status};
use retrypolicy::Error as CoreError;

/// Why a conversion or a core call did not produce a value.
pub enum Fail {
    /// A core error: thrown with its `code` and `field`.
    Core(CoreError),
    /// A napi failure, or a JavaScript exception already pending.
    Napi(NapiError),
}

impl From<CoreError> for Fail {
    fn from(e: CoreError) -> Self {
        Fail::Core(e)
    }
}

impl From<NapiError> for Fail {
    fn from(e: NapiError) -> Self {
        Fail::Napi(e)
    }
}

/// What the conversions and the export bodies return.
pub type Res<T> = Result<T, Fail>;

/// Runs an export's body; a core error is thrown as an `Error` with `code` and `field`.
pub fn run<T>(env: &Env, body: impl FnOnce() -> Res<T>) -> napi::Result<T> {
    body().map_err(|fail| match fail {
        Fail::Napi(e) => e,
        Fail::Core(e) => throw(env, &e),
    })
}

/// Throws `e` and returns the error that tells napi-rs an exception is already pending.
fn throw(env: &Env, e: &CoreError) -> NapiError {
    let thrown = (|| {
        let mut error = env.create_error(NapiError::new(Status::GenericFailure, e.to_string()))?;
        error.set_named_property("code", e.code())?;
        error.set_named_property("field", e.field())?;
        env.throw(error)
    })();
    match thrown {
        Ok(()) => NapiError::from_status(Status::PendingException),
        Err(other) => other,
    }
}

/// An `invalid_type` error naming `field`.
pub fn invalid_type(field: &str, message: String) -> Fail {
    Fail::Core(CoreError::InvalidType {
        field: field.to_owned(),
        message,
    })
}
