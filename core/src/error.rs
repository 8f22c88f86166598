//! The one error type of the core, each variant with a stable `code()` shared by every binding.
//! Messages cut every echoed field and value to [`ECHO_LIMIT`] characters, whoever built the error.

use serde::Serialize;

/// Every way an input to the core can be wrong; `code()` is stable across releases and languages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[serde(tag = "code", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Error {
    /// A retry reason name that is not in the RFC 0049 table.
    #[error("{}: unknown retry reason {:?}", shorten(.field), shorten(.value))]
    UnknownReason {
        /// Where the bad value was found, e.g. `reason` or `request.previous_reasons[0]`.
        field: String,
        /// The rejected text.
        value: String,
    },
    /// A name (service, operation, strategy, jitter mode, ...) that the core does not know.
    #[error("{}: unknown name {:?}{}", shorten(.field), shorten(.value), expected_suffix(.expected))]
    UnknownName {
        /// Where the bad value was found.
        field: String,
        /// The rejected text.
        value: String,
        /// The accepted names, when known.
        expected: String,
    },
    /// A duration that is negative, not finite, not an integer number of milliseconds or too large.
    #[error("{}: invalid duration {}: expected a whole number of milliseconds (a number up to 2^53-1, or a decimal string up to 2^64-1)", shorten(.field), shorten(.value))]
    InvalidDuration {
        /// Where the bad value was found.
        field: String,
        /// The rejected value, as text.
        value: String,
    },
    /// A random draw outside `[0, 1)`.
    #[error("{}: random draw {} is not in [0, 1)", shorten(.field), shorten(.value))]
    InvalidRandom {
        /// Where the bad value was found.
        field: String,
        /// The rejected value, as text.
        value: String,
    },
    /// A number outside the range the field accepts.
    #[error("{}: {} is out of range: expected {}", shorten(.field), shorten(.value), .expected)]
    OutOfRange {
        /// Where the bad value was found.
        field: String,
        /// The rejected value, as text.
        value: String,
        /// What the field accepts.
        expected: String,
    },
    /// A value of the wrong JSON type (a string where a number belongs, ...).
    #[error("{}: {}", shorten(.field), .message)]
    InvalidType {
        /// Where the bad value was found.
        field: String,
        /// What was wrong, as serde phrased it.
        message: String,
    },
    /// A field that the format does not have (policies reject unknown fields).
    #[error("{}: unknown field", shorten(.field))]
    UnknownField {
        /// The full path of the unknown field.
        field: String,
    },
    /// A required field that is absent.
    #[error("{}: missing field", shorten(.field))]
    MissingField {
        /// The full path of the missing field.
        field: String,
    },
    /// Text that is not JSON at all.
    #[error("malformed JSON at line {line} column {column}: {message}")]
    MalformedJson {
        /// The parser's message.
        message: String,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
    },
    /// A name this build knows but was built without (a function of the JSON API, a class of a
    /// binding): its cargo feature is left out. Its code is `unknown_name`, as for a name no
    /// build knows; the message names the feature.
    #[serde(rename = "unknown_name")]
    #[error("{}: {:?} is not in this build: it needs the feature {:?} ({}), which this build leaves out", shorten(.field), shorten(.value), .feature, crate::features::feature(.feature).map_or("", |f| f.adds))]
    NotBuilt {
        /// Where the name was found (`function` for the JSON API).
        field: String,
        /// The name.
        value: String,
        /// The cargo feature it needs.
        feature: String,
    },
    /// A document (a policy, a budget or breaker document or snapshot) whose `version` this
    /// release cannot read.
    #[error("version: unsupported document version {}; this release reads version 1", shorten(.value))]
    UnsupportedVersion {
        /// The version found.
        value: String,
    },
}

fn expected_suffix(expected: &str) -> String {
    if expected.is_empty() {
        String::new()
    } else {
        format!(", expected one of {expected}")
    }
}

impl Error {
    /// The stable machine-readable code of this error, identical in every language.
    pub fn code(&self) -> &'static str {
        match self {
            Error::UnknownReason { .. } => "unknown_reason",
            Error::UnknownName { .. } | Error::NotBuilt { .. } => "unknown_name",
            Error::InvalidDuration { .. } => "invalid_duration",
            Error::InvalidRandom { .. } => "invalid_random",
            Error::OutOfRange { .. } => "out_of_range",
            Error::InvalidType { .. } => "invalid_type",
            Error::UnknownField { .. } => "unknown_field",
            Error::MissingField { .. } => "missing_field",
            Error::MalformedJson { .. } => "malformed_json",
            Error::UnsupportedVersion { .. } => "unsupported_version",
        }
    }

    /// The field path the error names (empty for malformed JSON).
    pub fn field(&self) -> &str {
        match self {
            Error::UnknownReason { field, .. }
            | Error::UnknownName { field, .. }
            | Error::NotBuilt { field, .. }
            | Error::InvalidDuration { field, .. }
            | Error::InvalidRandom { field, .. }
            | Error::OutOfRange { field, .. }
            | Error::InvalidType { field, .. }
            | Error::UnknownField { field }
            | Error::MissingField { field } => field,
            Error::UnsupportedVersion { .. } => "version",
            Error::MalformedJson { .. } => "",
        }
    }

    /// Every stable error code, for bindings that declare one exception class per code.
    pub const ALL_CODES: [&'static str; 10] = [
        "unknown_reason",
        "unknown_name",
        "invalid_duration",
        "invalid_random",
        "out_of_range",
        "invalid_type",
        "unknown_field",
        "missing_field",
        "malformed_json",
        "unsupported_version",
    ];
}

/// How many characters of an input value an error message echoes at most.
pub const ECHO_LIMIT: usize = 80;

/// `text` cut to [`ECHO_LIMIT`] characters (with `…` when cut), for echoing input in messages.
pub fn shorten(text: &str) -> String {
    match text.char_indices().nth(ECHO_LIMIT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

impl Error {
    /// The same error naming `field` instead (for values read on their own, then placed).
    pub fn with_field(self, field: &str) -> Error {
        let field = field.to_owned();
        match self {
            Error::UnknownReason { value, .. } => Error::UnknownReason { field, value },
            Error::UnknownName { value, expected, .. } => Error::UnknownName {
                field,
                value,
                expected,
            },
            Error::NotBuilt { value, feature, .. } => Error::NotBuilt {
                field,
                value,
                feature,
            },
            Error::InvalidDuration { value, .. } => Error::InvalidDuration { field, value },
            Error::InvalidRandom { value, .. } => Error::InvalidRandom { field, value },
            Error::OutOfRange { value, expected, .. } => Error::OutOfRange {
                field,
                value,
                expected,
            },
            Error::InvalidType { message, .. } => Error::InvalidType { field, message },
            Error::UnknownField { .. } => Error::UnknownField { field },
            Error::MissingField { .. } => Error::MissingField { field },
            other @ (Error::MalformedJson { .. } | Error::UnsupportedVersion { .. }) => other,
        }
    }
}

/// `name` under `prefix` as an error's field path (`budget.max_tokens`); `name` alone at the top.
#[cfg(feature = "guards")]
pub(crate) fn join_field(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Shorthand for results whose error is the core's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_echo_at_most_the_limit_whoever_built_the_error() {
        let long = "k".repeat(200_000);
        for e in [
            Error::UnknownName {
                field: long.clone(),
                value: long.clone(),
                expected: String::new(),
            },
            Error::OutOfRange {
                field: long.clone(),
                value: long.clone(),
                expected: "x".into(),
            },
            Error::UnknownField { field: long.clone() },
            Error::UnsupportedVersion { value: long.clone() },
        ] {
            assert!(
                e.to_string().len() < 4 * ECHO_LIMIT,
                "{} bytes",
                e.to_string().len()
            );
        }
    }
}
