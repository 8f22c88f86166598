//! The KV error map (RFC 0013, RFC 0069) as the server sends it, and its retry indication.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// RFC 0049 section for error-map handling.
pub const ERROR_MAP_SECTION: &str = "RFC 0049, KV Error Map Handling";

/// The attributes that RFC 0049 treats as a retry indication.
pub const RETRY_ATTRIBUTES: [&str; 2] = ["retry-now", "retry-later"];

/// A KV error map document, as returned by GET_ERROR_MAP (RFC 0013).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorMap {
    /// Error map format version.
    pub version: u32,
    /// Revision of the map.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub revision: u32,
    /// Entries keyed by status code in lowercase hex without `0x` (e.g. `"86"`, `"fff0"`).
    pub errors: BTreeMap<String, ErrorMapEntry>,
}

/// One entry of the error map. Unknown members (the `retry` spec, future fields) are ignored:
/// RFC 0049 says the retry spec's intervals must not override the user's strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorMapEntry {
    /// Symbolic name.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub name: String,
    /// Description.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub desc: String,
    /// Attributes such as `temp`, `retry-now`, `retry-later`.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub attrs: Vec<String>,
}

impl ErrorMap {
    /// The entry for `status`, matching keys as hexadecimal numbers (so `"0086"` matches 0x86).
    pub fn entry(&self, status: u16) -> Option<&ErrorMapEntry> {
        self.errors
            .iter()
            .find(|(k, _)| {
                let k = k.trim_start_matches("0x");
                u16::from_str_radix(k, 16).ok() == Some(status)
            })
            .map(|(_, v)| v)
    }
}

impl ErrorMapEntry {
    /// Whether the entry carries `retry-now` or `retry-later`.
    pub fn indicates_retry(&self) -> bool {
        self.attrs.iter().any(|a| RETRY_ATTRIBUTES.contains(&a.as_str()))
    }
}
