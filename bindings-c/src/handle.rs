//! Handle checking: every handle the library gives C (`rp_policy`, `rp_error_map`, `rp_budget`,
//! `rp_breaker`, `rp_run`) is an `Arc` held in one process-wide registry of live handles, keyed by
//! its address and tagged with its type. A call looks the pointer up before reading through it, so a
//! freed handle (use after free, double free), a handle of another type, or any pointer this library
//! did not make is RP_RESULT_INVALID_HANDLE naming the argument, never a read of memory the library
//! does not own. The call works on its own clone of the `Arc`: a handle freed by another thread
//! during the call stays allocated until the call returns (README, "Handles").

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::error::{Failure, RP_RESULT_INVALID_HANDLE};
use crate::panic::guard;
use crate::*;

/// A live handle of any type, as the registry holds it.
pub(crate) enum Live {
    /// An `rp_policy`.
    Policy(Arc<rp_policy>),
    /// An `rp_error_map`.
    ErrorMap(Arc<rp_error_map>),
    /// An `rp_budget`.
    Budget(Arc<rp_budget>),
    /// An `rp_breaker`.
    Breaker(Arc<rp_breaker>),
    /// An `rp_run`.
    Run(Arc<rp_run>),
}

impl Live {
    /// The C type's name, for error details.
    fn type_name(&self) -> &'static str {
        match self {
            Live::Policy(_) => rp_policy::NAME,
            Live::ErrorMap(_) => rp_error_map::NAME,
            Live::Budget(_) => rp_budget::NAME,
            Live::Breaker(_) => rp_breaker::NAME,
            Live::Run(_) => rp_run::NAME,
        }
    }
}

/// A type the library hands to C as an opaque handle.
pub(crate) trait Handle: Sized {
    /// The C type's name ("rp_budget").
    const NAME: &'static str;
    /// The registry's entry for `handle`.
    fn wrap(handle: Arc<Self>) -> Live;
    /// The handle in `live` if it is of this type.
    fn unwrap(live: &Live) -> Option<&Arc<Self>>;
}

/// Implements `Handle` for a type and its `Live` variant.
macro_rules! handle_type {
    ($($ty:ident => $variant:ident),* $(,)?) => {$(
        impl Handle for $ty {
            const NAME: &'static str = stringify!($ty);
            fn wrap(handle: Arc<Self>) -> Live {
                Live::$variant(handle)
            }
            fn unwrap(live: &Live) -> Option<&Arc<Self>> {
                match live {
                    Live::$variant(h) => Some(h),
                    _ => None,
                }
            }
        }
    )*};
}

handle_type!(
    rp_policy => Policy,
    rp_error_map => ErrorMap,
    rp_budget => Budget,
    rp_breaker => Breaker,
    rp_run => Run,
);

/// The live handles by address. A BTreeMap (const-constructible; leak checkers see its nodes as
/// reachable). Nothing panics while it is held, so a poisoned lock is taken as it is.
static LIVE: RwLock<BTreeMap<usize, Live>> = RwLock::new(BTreeMap::new());

/// Registers `value` as a new live handle and returns the pointer C gets.
pub(crate) fn register<T: Handle>(value: T) -> *mut T {
    let handle = Arc::new(value);
    let p = Arc::as_ptr(&handle).cast_mut();
    let mut live = LIVE.write().unwrap_or_else(|e| e.into_inner());
    live.insert(p as usize, T::wrap(handle));
    p
}

/// RP_RESULT_INVALID_HANDLE naming `argument`.
#[cold]
fn invalid(argument: &str, expected: &str, found: Option<&Live>) -> Failure {
    let detail = match found {
        Some(other) => format!("{argument}: an {}, not an {expected}", other.type_name()),
        None => format!("{argument}: not a live {expected} (freed already, or not made by this library)"),
    };
    Failure::named(RP_RESULT_INVALID_HANDLE, argument, detail)
}

/// The live handle `p` points to: RP_RESULT_NULL_POINTER for NULL, RP_RESULT_INVALID_HANDLE for a
/// freed handle, one of another type, or any other pointer (never read through).
pub(crate) fn get<T: Handle>(p: *const T, argument: &str) -> Result<Arc<T>, Failure> {
    if p.is_null() {
        return Err(Failure::null(argument));
    }
    let live = LIVE.read().unwrap_or_else(|e| e.into_inner());
    match live.get(&(p as usize)) {
        Some(entry) => T::unwrap(entry)
            .cloned()
            .ok_or_else(|| invalid(argument, T::NAME, Some(entry))),
        None => Err(invalid(argument, T::NAME, None)),
    }
}

/// The live handle `p` points to, or None for NULL; errors as `get`.
pub(crate) fn get_optional<T: Handle>(p: *const T, argument: &str) -> Result<Option<Arc<T>>, Failure> {
    match p.is_null() {
        true => Ok(None),
        false => get(p, argument).map(Some),
    }
}

/// Frees the handle `p` (NULL: a no-op). A pointer that is no live handle of this type (a double
/// free, another type's handle, any other pointer) frees nothing and records RP_RESULT_INVALID_HANDLE
/// naming `argument` as this thread's last error (the free functions return nothing). The handle's
/// memory goes when the last call still using it returns.
pub(crate) fn release<T: Handle>(p: *mut T, argument: &str) {
    if p.is_null() {
        return;
    }
    let removed = {
        let mut live = LIVE.write().unwrap_or_else(|e| e.into_inner());
        match live.get(&(p as usize)).map(T::unwrap) {
            Some(Some(_)) => live.remove(&(p as usize)),
            found => {
                let failure = match found {
                    Some(_) => invalid(argument, T::NAME, live.get(&(p as usize))),
                    None => invalid(argument, T::NAME, None),
                };
                drop(live);
                let _ = failure.record();
                return;
            }
        }
    };
    // Dropped outside the lock: a run's drop releases its budget and breaker.
    guard((), || drop(removed));
}
