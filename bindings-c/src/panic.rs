//! The panic boundary: every export's body runs inside `ffi_boundary!`, so no panic crosses into C.
//!
//! A panic in a function returning `rp_result` becomes RP_RESULT_PANIC (with the panic message as
//! this thread's last-error detail) and leaves every out-parameter untouched; in a function
//! returning a pointer it becomes NULL; in a `void` function it is swallowed. Unwinding out of an
//! `extern "C"` function would abort the host process instead.

use std::any::Any;
use std::ffi::c_char;

use crate::error::{rp_result, Failure, RP_RESULT_OK, RP_RESULT_PANIC};

/// What an export's body evaluates to, how that reaches C, and what C gets after a panic.
pub(crate) trait FfiReturn {
    /// The C return type.
    type Out;
    /// Converts a finished body's value (recording a failure's detail).
    fn finish(self) -> Self::Out;
    /// The value returned when the body panicked.
    fn panicked() -> Self::Out;
}

impl FfiReturn for Result<(), Failure> {
    type Out = rp_result;
    fn finish(self) -> rp_result {
        match self {
            Ok(()) => RP_RESULT_OK,
            Err(failure) => failure.record(),
        }
    }
    fn panicked() -> rp_result {
        RP_RESULT_PANIC
    }
}

impl FfiReturn for rp_result {
    type Out = rp_result;
    fn finish(self) -> rp_result {
        self
    }
    fn panicked() -> rp_result {
        RP_RESULT_PANIC
    }
}

impl FfiReturn for () {
    type Out = ();
    fn finish(self) {}
    fn panicked() {}
}

impl FfiReturn for *const c_char {
    type Out = *const c_char;
    fn finish(self) -> *const c_char {
        self
    }
    fn panicked() -> *const c_char {
        std::ptr::null()
    }
}

/// The text of a panic payload (`panic!` with a literal or a formatted message).
fn payload_text(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

/// Turns a caught body result into the C return value; used only by `ffi_boundary!`.
#[inline]
pub(crate) fn settle<R: FfiReturn>(caught: std::thread::Result<R>) -> R::Out {
    match caught {
        Ok(value) => value.finish(),
        Err(payload) => panicked::<R>(payload),
    }
}

/// Records a caught panic as this thread's last error and returns the panic value.
#[cold]
#[inline(never)]
fn panicked<R: FfiReturn>(payload: Box<dyn Any + Send>) -> R::Out {
    let detail = format!("panic: {}", payload_text(payload.as_ref()));
    // Dropping a payload can itself panic (a payload type with a panicking Drop): forget it.
    std::mem::forget(payload);
    let _ = Failure::new(RP_RESULT_PANIC, detail).record();
    R::panicked()
}

/// Runs an export's body with panics caught.
///
/// `ffi_boundary!({ ... })` for a function returning `rp_result`: the block is a
/// `Result<(), Failure>` (so `?` works on core errors). `ffi_boundary!(T, { ... })` for any
/// other return type `T` implementing `FfiReturn` (a pointer, `()`, or `rp_result`, which is
/// passed through as is: a body returning a failure code that way records no detail itself).
macro_rules! ffi_boundary {
    ($body:block) => {
        $crate::panic::settle(::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(
            || -> ::std::result::Result<(), $crate::error::Failure> { $body },
        )))
    };
    ($ty:ty, $body:block) => {
        $crate::panic::settle(::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(
            || -> $ty { $body },
        )))
    };
}

pub(crate) use ffi_boundary;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::with_last_error;

    fn boom(fail: bool) -> rp_result {
        ffi_boundary!({
            if fail {
                panic!("deliberate {}", 42);
            }
            Ok(())
        })
    }

    #[test]
    fn a_panic_becomes_rp_result_panic_with_its_message() {
        assert_eq!(boom(false), RP_RESULT_OK);
        assert_eq!(boom(true), RP_RESULT_PANIC);
        with_last_error(|m| assert_eq!(m, "panic: deliberate 42"));
    }

    #[test]
    fn pointer_and_void_bodies_get_their_panic_values() {
        let p: *const c_char = ffi_boundary!(*const c_char, { panic!("x") });
        assert!(p.is_null());
        let () = ffi_boundary!((), { panic!("y") });
        with_last_error(|m| assert_eq!(m, "panic: y"));
    }
}
