//! `rp_policy`: a loaded, validated policy document, immutable and shared between threads.

use std::ffi::c_char;
use std::ops::Deref;

use retrypolicy::Policy;

use crate::error::{rp_result, Failure};
use crate::ffi::{output, text};
use crate::handle::{get_optional, register, release, Held};
use crate::panic::guard;

/// A loaded policy: immutable, shareable between threads; create with `rp_policy_from_json`, free
/// with `rp_policy_free`. Where a function takes a policy, NULL stands for the RFC 0049 default.
pub struct rp_policy(Policy);

/// A policy for one call: a live handle's (kept alive by the call) or the RFC 0049 default.
pub(crate) enum PolicyRef {
    /// NULL: the RFC 0049 default.
    Default,
    /// A live `rp_policy`.
    Handle(Held<rp_policy>),
}

impl Deref for PolicyRef {
    type Target = Policy;
    fn deref(&self) -> &Policy {
        match self {
            PolicyRef::Default => &Policy::RFC,
            PolicyRef::Handle(p) => &p.0,
        }
    }
}

/// The policy behind `p`, or the RFC 0049 default for NULL; a pointer that is no live
/// `rp_policy` is RP_RESULT_INVALID_HANDLE naming "policy".
pub(crate) fn policy_or_default(p: *const rp_policy) -> Result<PolicyRef, Failure> {
    Ok(get_optional(p, "policy")?.map_or(PolicyRef::Default, PolicyRef::Handle))
}

/// Parses and validates a policy document (`{"version": 1, "strategy": "best_effort", ...}`; `{}`
/// is the RFC 0049 default) into a new handle, which the caller frees with `rp_policy_free`.
///
/// On failure `rp_last_error_message` names the field, e.g. "backoff.min_ms: 9 is out of range: ...".
#[no_mangle]
pub unsafe extern "C" fn rp_policy_from_json(
    json: *const c_char,
    json_len: usize,
    policy_out: *mut *mut rp_policy,
) -> rp_result {
    output!(policy_out, {
        let policy = retrypolicy_wire::parse_policy(text(json, Some(json_len), "json")?)?;
        Ok(register(rp_policy(policy)))
    })
}

/// Frees a policy handle; NULL is a no-op. A pointer that is no live `rp_policy` (freed already,
/// another type's handle) frees nothing and sets this thread's last error (RP_RESULT_INVALID_HANDLE).
#[no_mangle]
pub extern "C" fn rp_policy_free(policy: *mut rp_policy) {
    release(policy, "policy")
}

/// Frees a string this library returned (`rp_decision_format`, `rp_call_json`); NULL is a no-op.
#[no_mangle]
pub unsafe extern "C" fn rp_string_free(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: the pointer contract (lib.rs): a string made by CString::into_raw, freed once.
        guard((), || drop(unsafe { std::ffi::CString::from_raw(s) }));
    }
}
