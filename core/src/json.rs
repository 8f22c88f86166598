//! JSON in and out: every serde failure becomes a typed [`Error`] that names the field.

use serde::de::{self, DeserializeOwned};

use crate::error::Error;

mod path;

const MARK: char = '\u{1}';

/// Builds a serde error that [`map_error`] turns back into a typed [`Error`] with the field path.
pub(crate) fn marked<E: de::Error>(code: &str, value: &str) -> E {
    E::custom(format!("{MARK}{code}{MARK}{value}{MARK}"))
}

/// Encodes a typed error raised inside a serde conversion (`try_from`) so that [`map_error`]
/// restores it, with the field made relative to the value being converted.
pub(crate) fn encode_marked(e: &Error) -> String {
    let (value, field) = match e {
        Error::UnknownName {
            field,
            value,
            expected,
        } => (format!("{value}|{expected}"), field.as_str()),
        Error::OutOfRange {
            field,
            value,
            expected,
        } => (format!("{value}|{expected}"), field.as_str()),
        Error::UnknownReason { field, value }
        | Error::InvalidDuration { field, value }
        | Error::InvalidRandom { field, value } => (value.clone(), field.as_str()),
        Error::InvalidType { field, message } => (message.clone(), field.as_str()),
        Error::UnknownField { field } | Error::MissingField { field } => (String::new(), field.as_str()),
        Error::UnsupportedVersion { value } => (value.clone(), ""),
        Error::MalformedJson { message, .. } => (message.clone(), ""),
    };
    format!("{MARK}{}{MARK}{value}{MARK}{field}{MARK}", e.code())
}

/// Parses JSON text into `T`, reporting failures as typed errors naming the field.
pub fn from_json_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    // Parse to a value first: serde_json reports some type errors met while streaming (a number
    // where an enum belongs) as syntax errors, and only true syntax errors are malformed JSON.
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| map_error(String::new(), e))?;
    from_json_value(&value)
}

/// Converts an already-parsed JSON value into `T`, reporting failures as typed errors naming the field.
pub fn from_json_value<T: DeserializeOwned>(value: &serde_json::Value) -> Result<T, Error> {
    #[cfg(test)]
    if path::tests::REFERENCE.with(|r| r.get()) {
        return path::tests::reference(value).map_err(|(path, e)| map_error(path, e));
    }
    path::deserialize(value).map_err(|(path, e)| map_error(path, e))
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn between<'a>(msg: &'a str, open: &str, close: char) -> Option<&'a str> {
    let start = msg.find(open)? + open.len();
    let len = msg[start..].find(close)?;
    Some(&msg[start..start + len])
}

fn map_error(path: String, e: serde_json::Error) -> Error {
    if e.is_syntax() || e.is_eof() || e.is_io() {
        let full = e.to_string();
        let message = full.split(" at line ").next().unwrap_or(&full).to_owned();
        return Error::MalformedJson {
            message,
            line: e.line(),
            column: e.column(),
        };
    }
    let full = e.to_string();
    let msg = full.split(" at line ").next().unwrap_or(&full);
    let field = if path.is_empty() {
        "(document)".to_owned()
    } else {
        path.clone()
    };
    if let Some(start) = msg.find(MARK) {
        let mut parts = msg[start + 1..].split(MARK);
        let code = parts.next().unwrap_or_default();
        let value = parts.next().unwrap_or_default().to_owned();
        let relative = parts.next().unwrap_or_default();
        let field = if relative.is_empty() {
            field
        } else {
            join(&path, relative)
        };
        let (first, expected) = match value.split_once('|') {
            Some((v, e)) => (v.to_owned(), e.to_owned()),
            None => (value.clone(), String::new()),
        };
        return match code {
            "unknown_reason" => Error::UnknownReason { field, value },
            "invalid_duration" => Error::InvalidDuration { field, value },
            "invalid_random" => Error::InvalidRandom { field, value },
            "unsupported_version" => Error::UnsupportedVersion { value },
            "missing_field" => Error::MissingField { field },
            "unknown_field" => Error::UnknownField { field },
            "unknown_name" => Error::UnknownName {
                field,
                value: first,
                expected,
            },
            "invalid_type" => Error::InvalidType {
                field,
                message: value,
            },
            _ => Error::OutOfRange {
                field,
                value: first,
                expected,
            },
        };
    }
    if let Some(name) = msg
        .strip_prefix("unknown field `")
        .and_then(|m| m.split('`').next())
    {
        // The path already ends with the unknown key.
        let field = if path.ends_with(name) {
            path
        } else {
            join(&path, name)
        };
        return Error::UnknownField { field };
    }
    if let Some(name) = msg
        .strip_prefix("missing field `")
        .and_then(|m| m.split('`').next())
    {
        return Error::MissingField {
            field: join(&path, name),
        };
    }
    if let Some(value) = msg
        .strip_prefix("unknown variant `")
        .and_then(|m| m.split('`').next())
    {
        let expected = msg.split_once("expected ").map(|(_, e)| e).unwrap_or("");
        let expected = expected.strip_prefix("one of ").unwrap_or(expected);
        return Error::UnknownName {
            field,
            value: value.to_owned(),
            expected: expected.replace('`', ""),
        };
    }
    if msg.starts_with("invalid value: integer") {
        if let Some(value) = between(msg, "integer `", '`') {
            let expected = msg.split_once("expected ").map(|(_, e)| e).unwrap_or("");
            return Error::OutOfRange {
                field,
                value: value.to_owned(),
                expected: expected.to_owned(),
            };
        }
    }
    Error::InvalidType {
        field,
        message: msg.to_owned(),
    }
}

/// Reads an internally tagged enum (`{"<tag>": "<variant>", ...fields}`) as `#[serde(tag = ...)]`
/// does, with the same errors at the same paths, but without serde's buffering through its private
/// `Content` type, which compiles every field type of every variant a second time: `T` (a
/// `variant_identifier` enum) names the variant, and the other keys come back as an object for
/// [`variant_fields`]. Unlike serde, an array is not read as `[tag, fields...]`.
pub(crate) fn tagged<'de, D, T>(
    d: D,
    tag: &'static str,
    expecting: &'static str,
) -> Result<(T, serde_json::Value), D::Error>
where
    D: de::Deserializer<'de>,
    T: de::Deserialize<'de>,
{
    struct TaggedVisitor<T> {
        tag: &'static str,
        expecting: &'static str,
        variant: std::marker::PhantomData<T>,
    }

    impl<'de, T: de::Deserialize<'de>> de::Visitor<'de> for TaggedVisitor<T> {
        type Value = (T, serde_json::Value);

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_map<M: de::MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            let mut variant = None;
            let mut fields = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                if key == self.tag {
                    if variant.is_some() {
                        return Err(de::Error::duplicate_field(self.tag));
                    }
                    variant = Some(map.next_value::<T>()?);
                } else {
                    let value = map.next_value::<serde_json::Value>()?;
                    fields.insert(key, value);
                }
            }
            match variant {
                Some(variant) => Ok((variant, serde_json::Value::Object(fields))),
                None => Err(de::Error::missing_field(self.tag)),
            }
        }
    }

    d.deserialize_any(TaggedVisitor {
        tag,
        expecting,
        variant: std::marker::PhantomData,
    })
}

/// Reads the fields [`tagged`] set aside into a struct variant's fields; an error is reported at
/// the enum, as serde reports errors inside an internally tagged variant.
pub(crate) fn variant_fields<B: DeserializeOwned, E: de::Error>(fields: &serde_json::Value) -> Result<B, E> {
    path::deserialize(fields).map_err(|(_, e)| E::custom(e))
}

/// Serde helpers for millisecond fields: a whole number, or a decimal string for values past 2^53.
pub mod ms {
    use serde::de::{self, Deserializer, Visitor};
    use serde::Serializer;
    use std::fmt;

    /// The largest integer every JSON reader (JavaScript included) holds exactly.
    pub const MAX_SAFE: u64 = (1 << 53) - 1;

    /// Writes `v` as a JSON number when it is at most 2^53-1, else as a decimal string.
    pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
        if *v <= MAX_SAFE {
            s.serialize_u64(*v)
        } else {
            s.serialize_str(&v.to_string())
        }
    }

    struct MsVisitor;

    impl Visitor<'_> for MsVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a whole number of milliseconds")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| super::marked("invalid_duration", &v.to_string()))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_SAFE as f64 {
                Ok(v as u64)
            } else {
                Err(super::marked("invalid_duration", &v.to_string()))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                v.parse().map_err(|_| super::marked("invalid_duration", v))
            } else {
                Err(super::marked("invalid_duration", v))
            }
        }
    }

    /// Reads a millisecond value (number or decimal string); anything else is `invalid_duration`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(MsVisitor)
    }

    /// The same, for an optional field.
    pub mod option {
        use serde::{Deserializer, Serializer};

        /// Writes `Some(v)` as [`super::serialize`] does, `None` as null.
        pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => super::serialize(v, s),
                None => s.serialize_none(),
            }
        }

        /// Reads null as `None`, else a millisecond value.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            struct OptVisitor;
            impl<'de> serde::de::Visitor<'de> for OptVisitor {
                type Value = Option<u64>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("null or a whole number of milliseconds")
                }
                fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                    super::deserialize(d).map(Some)
                }
            }
            d.deserialize_option(OptVisitor)
        }
    }
}

/// Serde helper for a random draw: a number in `[0, 1)`, anything else is `invalid_random`.
pub mod draw {
    use serde::{Deserialize, Deserializer};

    /// Reads an optional draw, rejecting values outside `[0, 1)`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        let v = Option::<f64>::deserialize(d)?;
        match v {
            Some(x) if !(0.0..1.0).contains(&x) => Err(super::marked("invalid_random", &x.to_string())),
            other => Ok(other),
        }
    }
}

/// Serde helper for a 16-bit status: a number, or a `0x`-prefixed hex string such as `"0xa2"`.
pub mod status {
    use serde::de::{self, Deserializer, Visitor};
    use std::fmt;

    const EXPECTED: &str = "0..=65535 or a 0x-prefixed hex string";

    struct StatusVisitor;

    impl Visitor<'_> for StatusVisitor {
        type Value = u16;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(EXPECTED)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u16, E> {
            u16::try_from(v).map_err(|_| super::marked("out_of_range", &format!("{v}|{EXPECTED}")))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u16, E> {
            u16::try_from(v).map_err(|_| super::marked("out_of_range", &format!("{v}|{EXPECTED}")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u16, E> {
            Err(super::marked("out_of_range", &format!("{v}|{EXPECTED}")))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u16, E> {
            v.strip_prefix("0x")
                .or_else(|| v.strip_prefix("0X"))
                .filter(|h| !h.is_empty() && h.len() <= 4)
                .and_then(|h| u16::from_str_radix(h, 16).ok())
                .ok_or_else(|| super::marked("out_of_range", &format!("{v}|{EXPECTED}")))
        }
    }

    /// Reads a status code as a number or a hex string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
        d.deserialize_any(StatusVisitor)
    }

    /// Parses a status given as text (`"0xa2"`), naming `field` in the error.
    pub fn parse_text(field: &str, text: &str) -> Result<u16, crate::Error> {
        StatusVisitor
            .visit_str::<serde::de::value::Error>(text)
            .map_err(|_| crate::Error::OutOfRange {
                field: field.to_owned(),
                value: text.to_owned(),
                expected: EXPECTED.to_owned(),
            })
    }
}

/// Parses one snake_case name (a strategy, jitter mode, service, ...) into `T`, naming `field` in errors.
pub fn parse_name<T: DeserializeOwned>(field: &str, name: &str) -> Result<T, Error> {
    from_json_value::<T>(&serde_json::Value::String(name.to_owned())).map_err(|e| match e {
        Error::UnknownName { value, expected, .. } => Error::UnknownName {
            field: field.to_owned(),
            value,
            expected,
        },
        Error::UnknownReason { value, .. } => Error::UnknownReason {
            field: field.to_owned(),
            value,
        },
        other => other,
    })
}
