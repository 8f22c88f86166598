//! Policies, parsed once and held by JavaScript as `#[napi]` class instances
//! (napi-rs tags every instance with its class, so no other object is ever read as one).

use napi::bindgen_prelude::{Env, Unknown};
use napi_derive::napi;
use retrypolicy::Policy;

use crate::convert::{self, Js};
use crate::errors::run;

/// The RFC 0049 default, for calls that pass no policy.
static RFC_POLICY: Policy = Policy::RFC;

/// A validated policy.
#[napi]
pub struct PolicyHandle {
    policy: Policy,
}

#[napi]
impl PolicyHandle {
    /// Parses and validates a policy document given as JSON text.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, text: Unknown) -> napi::Result<Self> {
        run(&env, || {
            let policy = convert::with_str(&Js(text), "policy", |s| Ok(retrypolicy_wire::parse_policy(s)?))?;
            Ok(PolicyHandle { policy })
        })
    }

    /// The normalized document as JSON text.
    #[napi(catch_unwind)]
    pub fn to_json(&self) -> String {
        self.policy.to_json()
    }
}

/// The policy behind an optional handle: the RFC default for none.
pub fn or_default(handle: Option<&PolicyHandle>) -> &Policy {
    handle.map_or(&RFC_POLICY, |h| &h.policy)
}
