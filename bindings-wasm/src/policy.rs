//! Policies: parsed and validated once from their JSON documents, then passed
//! by reference to every call that reads them.

use wasm_bindgen::prelude::*;

use crate::errors::Fallible;

/// A validated retry policy.
#[wasm_bindgen]
pub struct Policy(pub(crate) retrypolicy::Policy);

#[wasm_bindgen]
impl Policy {
    /// Parses and validates a policy document (JSON text; `{}` is the RFC 0049 default).
    pub fn parse(json: &str) -> Fallible<Policy> {
        Ok(Policy(retrypolicy_wire::parse_policy(json)?))
    }

    /// The normalized document as JSON text (every field present).
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        self.0.to_json()
    }
}
