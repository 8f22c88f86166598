//! Handle checking: every handle the library gives C (`rp_policy`, `rp_error_map`, `rp_budget`,
//! `rp_breaker`, `rp_run`, the gRPC and AWS ones) is an `Arc` held in one process-wide registry of live handles, keyed by
//! its address and tagged with its type. A call looks the pointer up before reading through it, so a
//! freed handle (use after free, double free), a handle of another type, or any pointer this library
//! did not make is RP_RESULT_INVALID_HANDLE naming the argument, never a read of memory the library
//! does not own. The call works on its own reference to the `Arc`: a handle freed by another thread
//! during the call stays allocated until the call returns (README, "Handles").
//!
//! The hot path skips the registry: each thread keeps the handle of each type it used last (its
//! `Arc`, whose address is the pointer C holds, and the count of frees of that type when it was
//! looked up). While no handle
//! of that type has been freed since, a call with the same address is that same live handle (the
//! cached `Arc` keeps its address from being reused), so it is taken from the cache with no lock and
//! no atomic read-modify-write; any free of the type bumps the count and sends every thread back to
//! the registry once. A free that happens before a call is seen by it (the count is read with
//! Acquire, bumped with Release); a free racing a call may land after it, and the call's `Arc`
//! keeps the memory alive. So a freed handle's memory goes when the last thread that cached it
//! makes its next call with a handle of that type, or exits (the freeing thread's own cache lets go
//! at once). What it buys (`make bench`, `rp_decide` with a policy handle, one run,
//! load ~3): 27.2 ns static / 29.0 ns shared (25-27x the no-op export, 465 instructions), against
//! 43.2-44.7 / 43.9-44.2 ns (34-44x, 481) through the registry on every call and 22.9-23.5 /
//! 22.8-23.7 ns (22-23x, 403) with no check at all. A call holds its handle as an `Arc` and the
//! count (16 bytes): holding the address as well (24 bytes) made the request's copy in `rp_decide`
//! stall (46 ns).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::thread::LocalKey;

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
    /// An `rp_grpc_service_config`.
    GrpcServiceConfig(Arc<rp_grpc_service_config>),
    /// An `rp_grpc_retry_policy`.
    GrpcRetryPolicy(Arc<rp_grpc_retry_policy>),
    /// An `rp_grpc_hedging_policy`.
    GrpcHedgingPolicy(Arc<rp_grpc_hedging_policy>),
    /// An `rp_aws_retry_config`.
    AwsRetryConfig(Arc<rp_aws_retry_config>),
    /// An `rp_aws_rate_limiter`.
    AwsRateLimiter(Arc<rp_aws_rate_limiter>),
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
            Live::GrpcServiceConfig(_) => rp_grpc_service_config::NAME,
            Live::GrpcRetryPolicy(_) => rp_grpc_retry_policy::NAME,
            Live::GrpcHedgingPolicy(_) => rp_grpc_hedging_policy::NAME,
            Live::AwsRetryConfig(_) => rp_aws_retry_config::NAME,
            Live::AwsRateLimiter(_) => rp_aws_rate_limiter::NAME,
        }
    }
}

/// A type the library hands to C as an opaque handle.
pub(crate) trait Handle: Sized + 'static {
    /// The C type's name ("rp_budget").
    const NAME: &'static str;
    /// The registry's entry for `handle`.
    fn wrap(handle: Arc<Self>) -> Live;
    /// The handle in `live` if it is of this type.
    fn unwrap(live: &Live) -> Option<&Arc<Self>>;
    /// How many handles of this type have been freed (bumped under the registry's write lock).
    fn frees() -> &'static AtomicU64;
    /// This thread's last handle of this type (see the module's doc).
    fn cache() -> &'static LocalKey<Cell<Option<Entry<Self>>>>;
}

/// A handle as a call holds it: its `Arc` (whose address is the pointer C holds), and the type's
/// free count when the registry was read.
pub(crate) struct Entry<T> {
    /// The handle, kept alive.
    handle: Arc<T>,
    /// `T::frees()` when this entry came from the registry.
    frees: u64,
}

/// A live handle for the length of one call; back into this thread's cache when the call is done.
pub(crate) struct Held<T: Handle>(ManuallyDrop<Entry<T>>);

impl<T: Handle> Held<T> {
    /// A reference the caller keeps past the call (a run keeps its budget and breaker).
    pub(crate) fn to_arc(&self) -> Arc<T> {
        Arc::clone(&self.0.handle)
    }
}

impl<T: Handle> Deref for Held<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0.handle
    }
}

impl<T: Handle> Drop for Held<T> {
    fn drop(&mut self) {
        // SAFETY: taken once, here; `self.0` is never used again.
        let entry = unsafe { ManuallyDrop::take(&mut self.0) };
        // Whatever the cache holds now (a nested call's entry) is dropped; after this thread's
        // cache is gone (thread exit), `entry` is just dropped.
        let _ = T::cache().try_with(|cache| cache.set(Some(entry)));
    }
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
            fn frees() -> &'static AtomicU64 {
                static FREES: FreeCount = FreeCount(AtomicU64::new(0));
                &FREES.0
            }
            fn cache() -> &'static LocalKey<Cell<Option<Entry<Self>>>> {
                thread_local!(static CACHE: Cell<Option<Entry<$ty>>> = const { Cell::new(None) });
                &CACHE
            }
        }
    )*};
}

/// A type's free count, on a cache line of its own: frees of runs (one per run) do not slow down
/// the reads of the policies' count.
#[repr(align(64))]
struct FreeCount(AtomicU64);

handle_type!(
    rp_policy => Policy,
    rp_error_map => ErrorMap,
    rp_budget => Budget,
    rp_breaker => Breaker,
    rp_run => Run,
    rp_grpc_service_config => GrpcServiceConfig,
    rp_grpc_retry_policy => GrpcRetryPolicy,
    rp_grpc_hedging_policy => GrpcHedgingPolicy,
    rp_aws_retry_config => AwsRetryConfig,
    rp_aws_rate_limiter => AwsRateLimiter,
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
pub(crate) fn get<T: Handle>(p: *const T, argument: &str) -> Result<Held<T>, Failure> {
    if p.is_null() {
        return Err(Failure::null(argument));
    }
    // This thread's last handle of the type, if it is `p` and no handle of the type was freed since.
    if let Some(entry) = T::cache().try_with(Cell::take).ok().flatten() {
        if Arc::as_ptr(&entry.handle) == p && entry.frees == T::frees().load(Ordering::Acquire) {
            return Ok(Held(ManuallyDrop::new(entry)));
        }
    }
    look_up(p, argument)
}

/// `get` through the registry.
#[inline(never)]
fn look_up<T: Handle>(p: *const T, argument: &str) -> Result<Held<T>, Failure> {
    let live = LIVE.read().unwrap_or_else(|e| e.into_inner());
    // Stable while the read lock is held: frees bump it under the write lock.
    let frees = T::frees().load(Ordering::Acquire);
    match live.get(&(p as usize)) {
        Some(entry) => match T::unwrap(entry) {
            Some(handle) => Ok(Held(ManuallyDrop::new(Entry {
                frees,
                handle: Arc::clone(handle),
            }))),
            None => Err(invalid(argument, T::NAME, Some(entry))),
        },
        None => Err(invalid(argument, T::NAME, None)),
    }
}

/// The live handle `p` points to, or None for NULL; errors as `get`.
pub(crate) fn get_optional<T: Handle>(p: *const T, argument: &str) -> Result<Option<Held<T>>, Failure> {
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
            Some(Some(_)) => {
                T::frees().fetch_add(1, Ordering::Release);
                live.remove(&(p as usize))
            }
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
    // This thread's cache lets go of it too (other threads' caches do at their next call of the
    // type, or when they exit); dropped outside the lock: a run's drop releases its budget and breaker.
    let cached = T::cache().try_with(Cell::take).ok().flatten();
    guard((), || drop((removed, cached)));
}
