//! The panic boundary: every export that can panic runs inside `guard` (most through
//! `ffi_boundary`), so no panic crosses into C, where unwinding out of an `extern "C"` function
//! would abort the host. A panic becomes RP_RESULT_PANIC (or nothing, for `void` exports), with
//! the panic message as this thread's last-error detail; out-parameters are untouched.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::{rp_result, Failure, RP_RESULT_OK, RP_RESULT_PANIC};

/// Runs `body`, returning `fallback` (and recording the panic message) if it panics.
pub(crate) fn guard<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        panicked(payload);
        fallback
    })
}

/// Runs an export's fallible `body`: RP_RESULT_OK, its failure's code (recording the detail), or
/// RP_RESULT_PANIC.
pub(crate) fn ffi_boundary(body: impl FnOnce() -> Result<(), Failure>) -> rp_result {
    guard(RP_RESULT_PANIC, || match body() {
        Ok(()) => RP_RESULT_OK,
        Err(failure) => failure.record(),
    })
}

/// Records a caught panic's message as this thread's last error.
#[cold]
#[inline(never)]
fn panicked(payload: Box<dyn Any + Send>) {
    let text = (payload.downcast_ref::<&str>().copied())
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    let detail = format!("panic: {text}");
    // Dropping a payload can itself panic (a payload type with a panicking Drop): forget it.
    std::mem::forget(payload);
    let _ = Failure::new(RP_RESULT_PANIC, detail).record();
}
