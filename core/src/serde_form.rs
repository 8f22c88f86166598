//! The JSON form of the core's types: serde helpers for milliseconds, random draws and status
//! codes, and [`Rejection`], the one way a core type's serde form refuses a value.
//!
//! Reading JSON text and turning serde's failures into typed errors with field paths is the wire
//! layer's job (the `retrypolicy-wire` crate); this module only gives each refusal a fixed,
//! input-free message so the wire layer can name it without reading anything the input wrote.

use std::fmt;

use serde::de;

use crate::error::Error;

/// A value that a core type's serde form refuses: a stable error code, the field it concerns
/// (relative to the value being read, `""` for the value itself) and what the field accepts.
/// Its message holds none of the input, so the input cannot choose the code or the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rejection {
    /// The stable error code ([`Error::code`]).
    pub code: &'static str,
    /// The field it concerns, relative to the value being read; `""` for that value itself.
    pub field: &'static str,
    /// What the field accepts (empty when the code says it all).
    pub expected: &'static str,
}

const fn reject(code: &'static str, field: &'static str, expected: &'static str) -> Rejection {
    Rejection {
        code,
        field,
        expected,
    }
}

/// What a status field accepts.
pub const STATUS_EXPECTED: &str = "0..=65535 or a 0x-prefixed hex string";

impl Rejection {
    /// A duration that is not a whole number of milliseconds in 0..=2^64-1.
    pub const DURATION: Rejection = reject("invalid_duration", "", "");
    /// A random draw outside [0, 1).
    pub const RANDOM: Rejection = reject("invalid_random", "", "");
    /// A status that is not a 16-bit number or hex string.
    pub const STATUS: Rejection = reject("out_of_range", "", STATUS_EXPECTED);
    /// A retry reason name not in the RFC 0049 table.
    pub const REASON: Rejection = reject("unknown_reason", "", "");
    /// A policy version other than 1.
    pub const VERSION: Rejection = reject("unsupported_version", "", "");
    /// A gRPC `attempt_ended` hedging event without its attempt.
    pub const ATTEMPT_MISSING: Rejection = reject("missing_field", "attempt", "");
    /// A gRPC hedging event of another kind with an attempt.
    pub const ATTEMPT_UNKNOWN: Rejection = reject("unknown_field", "attempt", "");

    /// Every rejection a core type raises, so the wire layer can recognise each by its message.
    pub const ALL: &'static [Rejection] = &[
        Self::DURATION,
        Self::RANDOM,
        Self::STATUS,
        Self::REASON,
        Self::VERSION,
        Self::ATTEMPT_MISSING,
        Self::ATTEMPT_UNKNOWN,
        crate::grpc::code::CODE_REJECTION,
        reject("missing_field", "service", ""),
        reject("missing_field", "operation", ""),
        reject("missing_field", "method", ""),
        reject("missing_field", "delay_ms", ""),
        reject("unknown_field", "operation", ""),
        reject("unknown_field", "readonly", ""),
        reject("unknown_field", "method", ""),
        reject("unknown_field", "delay_ms", ""),
        reject("unknown_field", "min_ms", ""),
        reject("unknown_field", "max_ms", ""),
        reject("unknown_field", "factor", ""),
        reject("unknown_field", "first", ""),
        reject("out_of_range", "min_ms", crate::backoff::MIN_AT_MOST_MAX),
        reject("out_of_range", "factor", crate::backoff::FACTOR_EXPECTED),
    ];

    /// The rejection for a typed error raised while building a value (its field relative to that
    /// value); `None` for an error no core type raises inside serde.
    pub fn of(e: &Error) -> Option<Rejection> {
        let expected = match e {
            Error::OutOfRange { expected, .. } => expected.as_str(),
            _ => "",
        };
        Self::ALL
            .iter()
            .copied()
            .find(|r| r.code == e.code() && r.field == e.field() && r.expected == expected)
    }

    /// The serde error carrying this rejection.
    pub fn into_de<E: de::Error>(self) -> E {
        E::custom(self)
    }

    /// The serde error for a typed error raised while building a value: its [`Rejection`].
    pub fn from_error<E: de::Error>(e: &Error) -> E {
        match Self::of(e) {
            Some(r) => r.into_de(),
            // Every error a core type's serde form raises is listed in ALL (a unit test checks).
            None => E::custom("retrypolicy: unlisted rejection"),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "retrypolicy rejected a value: {} at {:?}, expected {:?}",
            self.code, self.field, self.expected
        )
    }
}

/// Reads an optional field's value, `null` as its type's default: the JSON API's contract reads an
/// optional key given `null` as not given (as `None` or `undefined` in the host languages).
pub fn or_default<'de, D: de::Deserializer<'de>, T: serde::Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    <Option<T> as serde::Deserialize>::deserialize(d).map(Option::unwrap_or_default)
}

/// Reads an optional field's value, `null` as `default()` (for a field whose default is not its
/// type's, as [`or_default`] for the others).
pub fn or_else<'de, D: de::Deserializer<'de>, T: serde::Deserialize<'de>>(
    d: D,
    default: fn() -> T,
) -> Result<T, D::Error> {
    <Option<T> as serde::Deserialize>::deserialize(d).map(|v| v.unwrap_or_else(default))
}

/// Reads the content of an internally tagged enum's unit variant (`{"kind": "success"}`): nothing
/// but its tag. serde ignores any other key there, `deny_unknown_fields` notwithstanding; this
/// answers `unknown_field` naming it, as for the enum's other variants.
pub fn no_fields<'de, D: de::Deserializer<'de>>(d: D) -> Result<(), D::Error> {
    struct Empty;

    impl<'de> de::Visitor<'de> for Empty {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("nothing but the tag")
        }

        fn visit_unit<E: de::Error>(self) -> Result<(), E> {
            Ok(())
        }

        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            match map.next_key::<String>()? {
                Some(key) => Err(de::Error::unknown_field(&key, &[])),
                None => Ok(()),
            }
        }
    }

    d.deserialize_any(Empty)
}

/// A snapshot's `version`: left out or null reads as 1 (restoring checks the value).
#[cfg(feature = "guards")]
pub(crate) fn version_or_one<'de, D: de::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    <Option<u64> as serde::Deserialize>::deserialize(d).map(|v| v.unwrap_or(1))
}

/// The version a snapshot left without one has.
#[cfg(feature = "guards")]
pub(crate) fn one() -> u64 {
    1
}

/// Documents that are JSON objects only. A derived struct also reads a JSON array (its fields in
/// order), so `[]` would read as a document with every field left out: `objects_only!` gives a
/// type whose serde form is derived with `#[serde(remote = "Self")]` its `Deserialize` through
/// [`object::Only`], which reads a struct from a map only (anything else is the wrong kind, named
/// with the type's `expecting` text), and its `Serialize` as derived.
pub mod object {
    use serde::de::{Deserializer, Visitor};

    /// A deserializer that reads a struct from a map only.
    pub struct Only<D>(pub D);

    impl<'de, D: Deserializer<'de>> Deserializer<'de> for Only<D> {
        type Error = D::Error;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.deserialize_any(visitor)
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            _fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, D::Error> {
            self.0.deserialize_map(visitor)
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
}

/// `Deserialize` (objects only, [`object::Only`]) and `Serialize` for types whose serde form is
/// derived with `#[serde(remote = "Self")]`.
#[cfg(feature = "grpc")]
macro_rules! objects_only {
    ($($t:ty),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <$t>::deserialize($crate::serde_form::object::Only(d))
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                <$t>::serialize(self, s)
            }
        }
    )*};
}
#[cfg(feature = "grpc")]
pub(crate) use objects_only;

/// Serde helpers for millisecond fields: a whole number, or a decimal string for values past 2^53.
pub mod ms {
    use serde::de::{self, Deserializer, Visitor};
    use serde::Serializer;
    use std::fmt;

    use super::Rejection;

    /// The largest integer every JSON reader (JavaScript included) holds exactly.
    pub const MAX_SAFE: u64 = (1 << 53) - 1;

    /// The largest delay a header (`Retry-After`, `x-amz-retry-after`) is read as: 2^63 − 1 ms,
    /// which every host's integer holds (C's `int64_t` included); a larger value saturates here.
    pub const MAX_HEADER_MS: u64 = i64::MAX as u64;

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
            u64::try_from(v).map_err(|_| Rejection::DURATION.into_de())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_SAFE as f64 {
                Ok(v as u64)
            } else {
                Err(Rejection::DURATION.into_de())
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
                v.parse().map_err(|_| Rejection::DURATION.into_de())
            } else {
                Err(Rejection::DURATION.into_de())
            }
        }
    }

    /// Reads a millisecond value (number or decimal string); anything else is `invalid_duration`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
        d.deserialize_any(MsVisitor)
    }

    /// The same, for a field whose default is 0: `null` reads as 0, as the key left out does.
    pub mod or_zero {
        /// Writes the value as [`super::serialize`] does.
        pub use super::serialize;

        /// Reads null as 0, else a millisecond value.
        pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
            super::option::deserialize(d).map(Option::unwrap_or_default)
        }
    }

    /// The same, for an optional field.
    pub mod option {
        use serde::{Deserialize, Deserializer, Serializer};

        /// Writes `Some(v)` as [`super::serialize`] does, `None` as null.
        pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
            match v {
                Some(v) => super::serialize(v, s),
                None => s.serialize_none(),
            }
        }

        /// Reads null as `None`, else a millisecond value.
        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
            #[derive(Deserialize)]
            struct Ms(#[serde(with = "super")] u64);
            Ok(Option::<Ms>::deserialize(d)?.map(|m| m.0))
        }
    }
}

/// Serde helper for a random draw: a number in `[0, 1)`, anything else is `invalid_random`.
pub mod draw {
    use serde::{Deserialize, Deserializer};

    use super::Rejection;

    /// Reads an optional draw, rejecting values outside `[0, 1)`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        match Option::<f64>::deserialize(d)? {
            Some(x) if !(0.0..1.0).contains(&x) => Err(Rejection::RANDOM.into_de()),
            other => Ok(other),
        }
    }
}

/// Serde helper for a 16-bit status: a number, or a `0x`-prefixed hex string such as `"0xa2"`.
pub mod status {
    use serde::de::{self, Deserializer, Visitor};
    use std::fmt;

    use super::{Rejection, STATUS_EXPECTED};

    struct StatusVisitor;

    impl Visitor<'_> for StatusVisitor {
        type Value = u16;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(STATUS_EXPECTED)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u16, E> {
            u16::try_from(v).map_err(|_| Rejection::STATUS.into_de())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<u16, E> {
            Err(Rejection::STATUS.into_de())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<u16, E> {
            Err(Rejection::STATUS.into_de())
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u16, E> {
            parse_hex(v).ok_or_else(|| Rejection::STATUS.into_de())
        }
    }

    fn parse_hex(v: &str) -> Option<u16> {
        v.strip_prefix("0x")
            .or_else(|| v.strip_prefix("0X"))
            .filter(|h| !h.is_empty() && h.len() <= 4)
            .and_then(|h| u16::from_str_radix(h, 16).ok())
    }

    /// Reads a status code as a number or a hex string.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
        d.deserialize_any(StatusVisitor)
    }

    /// Parses a status given as text (`"0xa2"`), naming `field` in the error.
    pub fn parse_text(field: &str, text: &str) -> Result<u16, crate::Error> {
        parse_hex(text).ok_or_else(|| crate::Error::OutOfRange {
            field: field.to_owned(),
            value: crate::error::shorten(text),
            expected: STATUS_EXPECTED.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rejection_has_its_own_message_and_maps_back() {
        for (i, r) in Rejection::ALL.iter().enumerate() {
            assert!(Error::ALL_CODES.contains(&r.code), "{r:?}");
            for other in &Rejection::ALL[i + 1..] {
                assert_ne!(r.to_string(), other.to_string());
            }
        }
        let e = Error::OutOfRange {
            field: "factor".into(),
            value: "0.5".into(),
            expected: crate::backoff::FACTOR_EXPECTED.into(),
        };
        assert_eq!(Rejection::of(&e).map(|r| r.field), Some("factor"));
        let unlisted = Error::UnknownField { field: "nope".into() };
        assert_eq!(Rejection::of(&unlisted), None);
    }
}
