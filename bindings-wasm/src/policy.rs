//! Policies and KV error maps: parsed and validated once from their JSON documents, then passed
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

/// A KV error map (RFC 0013) as the server sent it, checked.
#[cfg(feature = "couchbase")]
#[wasm_bindgen]
pub struct ErrorMap(retrypolicy::ErrorMap);

#[cfg(feature = "couchbase")]
#[wasm_bindgen]
impl ErrorMap {
    /// Parses an error map document (JSON text).
    pub fn parse(json: &str) -> Fallible<ErrorMap> {
        Ok(ErrorMap(retrypolicy_wire::from_json_str(json)?))
    }

    /// The parsed document as JSON text (what `classify_kv` takes as its `error_map`).
    #[wasm_bindgen(js_name = toJson)]
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.0).unwrap_or_default()
    }
}
