//! Bench only (bench/decide.mjs), behind the cargo feature `bench`: the shipped addon has none of
//! these. `make bench` builds them into a separate addon, build/bench/.

use napi::bindgen_prelude::Unknown;
use napi_derive::napi;

use crate::policy::PolicyHandle;

/// A `#[napi]` no-op with `decide`'s signature, the per-call floor of napi-rs that `decide` is
/// measured against.
#[napi(js_name = "benchNoop")]
#[allow(clippy::too_many_arguments)]
pub fn bench_noop(
    _service: Unknown,
    _operation: Unknown,
    _readonly: Unknown,
    _method: Unknown,
    _timeout_ms: Unknown,
    _elapsed_ms: Unknown,
    _attempts: Unknown,
    _idempotent: Unknown,
    _strategy: Unknown,
    _random: Unknown,
    _previous_delay_ms: Unknown,
    _previous_reasons: Unknown,
    _reason: Unknown,
    _policy: Option<&PolicyHandle>,
    _make: Unknown,
) {
}

/// A `#[napi]` no-op without arguments.
#[napi(js_name = "benchNoopEmpty")]
pub fn bench_noop_empty() {}
