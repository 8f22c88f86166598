//! A serde `Deserializer` over a borrowed [`Value`] that records where an error happened.
//!
//! It reads a value as serde_json's `&Value` deserializer does (same visits, same error messages),
//! except that an array is not read as a struct's fields in order and map keys are read as plain
//! strings (serde_json also parses numeric and bool keys; no input type has such keys), and
//! records the path the way
//! serde_path_to_error does (`a.b[1].c`: keys and enum variants joined by dots, sequence indices
//! in brackets, the deepest point an error passed).
//! One deserializer type for every nesting level means each input type's `Deserialize` is
//! compiled once, not once per wrapper layer: that is what keeps the WebAssembly module small.

use std::cell::Cell;

use serde::de::value::BorrowedStrDeserializer;
use serde::de::{self, DeserializeSeed, Deserializer, Expected, Unexpected, Visitor};
use serde_json::{Map, Value};

type Error = serde_json::Error;

/// Where a value sits inside the document, innermost last.
enum Chain<'a> {
    Root,
    Key { parent: &'a Chain<'a>, key: &'a str },
    Index { parent: &'a Chain<'a>, index: usize },
}

impl Chain<'_> {
    /// Appends the path to `out`; false for the root (an empty path).
    fn write(&self, out: &mut String) -> bool {
        match self {
            Chain::Root => false,
            Chain::Key { parent, key } => {
                if parent.write(out) {
                    out.push('.');
                }
                out.push_str(key);
                true
            }
            Chain::Index { parent, index } => {
                parent.write(out);
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
                true
            }
        }
    }
}

/// The path of the first (deepest) error, once one happened.
struct Track(Cell<Option<String>>);

impl Track {
    /// Passes `r` on, recording `chain` as the error's path unless a deeper one was recorded first.
    fn check<T>(&self, chain: &Chain<'_>, r: Result<T, Error>) -> Result<T, Error> {
        // A branch and a call per instantiation; the work is in one non-generic function.
        if r.is_err() {
            self.mark(chain);
        }
        r
    }

    /// Records `chain` unless a path is recorded already.
    #[inline(never)]
    fn mark(&self, chain: &Chain<'_>) {
        let path = self.0.take().unwrap_or_else(|| {
            let mut out = String::new();
            chain.write(&mut out);
            out
        });
        self.0.set(Some(path));
    }
}

/// Deserializes `T` from `value`; on failure, the error and the path where it happened ("" for the root).
pub(crate) fn deserialize<'de, T: de::Deserialize<'de>>(value: &'de Value) -> Result<T, (String, Error)> {
    let track = Track(Cell::new(None));
    let de = ValueDe {
        value,
        chain: &Chain::Root,
        track: &track,
    };
    T::deserialize(de).map_err(|e| (track.0.take().unwrap_or_default(), e))
}

/// The deserializer at one point of the document: the value there and the path to it.
#[derive(Clone, Copy)]
struct ValueDe<'de, 'a> {
    value: &'de Value,
    chain: &'a Chain<'a>,
    track: &'a Track,
}

/// What serde_json's `Value::unexpected` reports for `value` in a type error.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            _ => Unexpected::Float(n.as_f64().unwrap_or_default()),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

impl<'de, 'a> ValueDe<'de, 'a> {
    /// The type error for this value where `exp` was expected.
    fn fail(&self, exp: &dyn Expected) -> Error {
        de::Error::invalid_type(unexpected(self.value), exp)
    }

    /// Passes `r` on, recording this value's path if it is the first error.
    fn track<T>(&self, r: Result<T, Error>) -> Result<T, Error> {
        self.track.check(self.chain, r)
    }

    /// A number as its own kind (u64, i64, else f64), or a type error.
    fn number<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => visitor.visit_u64(u),
                (None, Some(i)) => visitor.visit_i64(i),
                _ => visitor.visit_f64(n.as_f64().unwrap_or_default()),
            },
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    /// Visits an array's items, each under its index; all must be read.
    fn seq<V: Visitor<'de>>(&self, items: &'de [Value], visitor: V) -> Result<V::Value, Error> {
        let mut access = SeqAccess {
            iter: items.iter(),
            index: 0,
            chain: self.chain,
            track: self.track,
        };
        let seq = visitor.visit_seq(&mut access)?;
        if access.iter.len() == 0 {
            Ok(seq)
        } else {
            Err(de::Error::invalid_length(items.len(), &"fewer elements in array"))
        }
    }

    /// Visits an object's entries, each value under its key; all must be read.
    fn map<V: Visitor<'de>>(&self, map: &'de Map<String, Value>, visitor: V) -> Result<V::Value, Error> {
        let mut access = MapAccess {
            iter: map.iter(),
            entry: None,
            chain: self.chain,
            track: self.track,
        };
        let out = visitor.visit_map(&mut access)?;
        if access.iter.len() == 0 {
            Ok(out)
        } else {
            Err(de::Error::invalid_length(map.len(), &"fewer elements in map"))
        }
    }
}

/// Number hints all read a number as serde_json does: the number's own kind, or a type error.
macro_rules! numbers {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.number(visitor)
        }
    )*};
}

impl<'de> Deserializer<'de> for ValueDe<'de, '_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(_) => return self.number(visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => self.seq(items, visitor),
            Value::Object(map) => self.map(map, visitor),
        };
        self.track(r)
    }

    numbers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        };
        self.track(r)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let (variant, value) = match self.value {
            Value::Object(map) => match map.iter().next() {
                Some((variant, value)) if map.len() == 1 => (variant.as_str(), Some(value)),
                _ => {
                    let e = de::Error::invalid_value(Unexpected::Map, &"map with a single key");
                    return self.track(Err(e));
                }
            },
            Value::String(variant) => (variant.as_str(), None),
            other => return self.track(Err(de::Error::invalid_type(unexpected(other), &"string or map"))),
        };
        let r = visitor.visit_enum(EnumAccess {
            variant,
            value,
            chain: self.chain,
            track: self.track,
        });
        self.track(r)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        let r = visitor.visit_newtype_struct(self);
        self.track(r)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Bool(b) => visitor.visit_bool(*b),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::String(s) => visitor.visit_borrowed_str(s),
            Value::Array(items) => self.seq(items, visitor),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Null => visitor.visit_unit(),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Array(items) => self.seq(items, visitor),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = match self.value {
            Value::Object(map) => self.map(map, visitor),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        // Unlike serde_json, an array is not read as a struct's fields in order: every input object
        // is keyed, and leaving out each struct's `visit_seq` keeps it out of the module.
        let r = match self.value {
            Value::Object(map) => self.map(map, visitor),
            _ => Err(self.fail(&visitor)),
        };
        self.track(r)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let r = visitor.visit_unit();
        self.track(r)
    }
}

/// An array's items for a visitor.
struct SeqAccess<'de, 'a> {
    iter: std::slice::Iter<'de, Value>,
    index: usize,
    chain: &'a Chain<'a>,
    track: &'a Track,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'de, '_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        let Some(value) = self.iter.next() else {
            return Ok(None);
        };
        let chain = Chain::Index {
            parent: self.chain,
            index: self.index,
        };
        self.index += 1;
        let de = ValueDe {
            value,
            chain: &chain,
            track: self.track,
        };
        self.track.check(&chain, seed.deserialize(de)).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An object's entries for a visitor; `entry` is the one whose key was just read.
struct MapAccess<'de, 'a> {
    iter: serde_json::map::Iter<'de>,
    entry: Option<(&'de str, &'de Value)>,
    chain: &'a Chain<'a>,
    track: &'a Track,
}

impl<'de> MapAccess<'de, '_> {
    /// Moves to the next entry and returns its key (one copy of the map walk, not one per visitor).
    #[inline(never)]
    fn advance(&mut self) -> Option<&'de str> {
        let (key, value) = self.iter.next()?;
        self.entry = Some((key, value));
        Some(key)
    }
}

impl<'de> de::MapAccess<'de> for MapAccess<'de, '_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some(key) = self.advance() else {
            return Ok(None);
        };
        let chain = Chain::Key {
            parent: self.chain,
            key,
        };
        let k = seed.deserialize(BorrowedStrDeserializer::new(key));
        self.track.check(&chain, k).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let Some((key, value)) = self.entry.take() else {
            return Err(de::Error::custom("value is missing"));
        };
        let chain = Chain::Key {
            parent: self.chain,
            key,
        };
        let de = ValueDe {
            value,
            chain: &chain,
            track: self.track,
        };
        self.track.check(&chain, seed.deserialize(de))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// An enum given as `"variant"` (`value` None) or `{"variant": value}`.
struct EnumAccess<'de, 'a> {
    variant: &'de str,
    value: Option<&'de Value>,
    chain: &'a Chain<'a>,
    track: &'a Track,
}

impl<'de, 'a> de::EnumAccess<'de> for EnumAccess<'de, 'a> {
    type Error = Error;
    type Variant = VariantAccess<'de, 'a>;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self::Variant), Error> {
        let v = seed.deserialize(BorrowedStrDeserializer::new(self.variant));
        let v = self.track.check(self.chain, v)?;
        Ok((
            v,
            VariantAccess {
                variant: self.variant,
                value: self.value,
                chain: self.chain,
                track: self.track,
            },
        ))
    }
}

/// The variant's content, read under the variant's name.
struct VariantAccess<'de, 'a> {
    variant: &'de str,
    value: Option<&'de Value>,
    chain: &'a Chain<'a>,
    track: &'a Track,
}

impl<'de> VariantAccess<'de, '_> {
    /// Runs `f` on the variant's content with the path extended by the variant name.
    fn inside<T>(self, f: impl FnOnce(Option<ValueDe<'de, '_>>) -> Result<T, Error>) -> Result<T, Error> {
        let chain = Chain::Key {
            parent: self.chain,
            key: self.variant,
        };
        let de = self.value.map(|value| ValueDe {
            value,
            chain: &chain,
            track: self.track,
        });
        self.track.check(&chain, f(de))
    }
}

impl<'de> de::VariantAccess<'de> for VariantAccess<'de, '_> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        self.inside(|de| match de {
            Some(de) => de::Deserialize::deserialize(de),
            None => Ok(()),
        })
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        self.inside(|de| match de {
            Some(de) => seed.deserialize(de),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        })
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Error> {
        self.inside(|de| match de {
            Some(ValueDe {
                value: Value::Array(items),
                ..
            }) if items.is_empty() => visitor.visit_unit(),
            Some(
                de @ ValueDe {
                    value: Value::Array(items),
                    ..
                },
            ) => de.seq(items, visitor),
            Some(de) => Err(de::Error::invalid_type(unexpected(de.value), &"tuple variant")),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &"tuple variant")),
        })
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        self.inside(|de| match de {
            Some(
                de @ ValueDe {
                    value: Value::Object(map),
                    ..
                },
            ) => de.map(map, visitor),
            Some(de) => Err(de::Error::invalid_type(unexpected(de.value), &"struct variant")),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"struct variant",
            )),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use serde_json::{json, Value};

    use crate::api::{call, FUNCTIONS};
    use crate::{HttpAttempt, TransactionEvent};

    /// Whether an outcome is the one intended difference from serde_json: an array read where a
    /// struct or an internally tagged enum belongs (not any other sequence error).
    fn array_for_object(outcome: &str) -> bool {
        [
            "invalid type: sequence, expected struct",
            "invalid type: sequence, expected internally tagged enum",
        ]
        .iter()
        .any(|m| outcome.contains(m))
    }

    thread_local! {
        /// While set, [`crate::json::from_json_value`] uses serde_path_to_error, the reference.
        pub(crate) static REFERENCE: Cell<bool> = const { Cell::new(false) };
    }

    /// What serde_path_to_error reports: the path ("" for the root) and the inner error.
    pub(crate) fn reference<T: serde::de::DeserializeOwned>(
        value: &Value,
    ) -> Result<T, (String, serde_json::Error)> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            (if path == "." { String::new() } else { path }, e.into_inner())
        })
    }

    /// The outcome of `f` as comparable text (its JSON, or the error's code, field and message),
    /// read with serde_path_to_error when `reference`.
    fn outcome(reference: bool, f: impl FnOnce() -> Result<Value, crate::Error>) -> String {
        REFERENCE.with(|r| r.set(reference));
        let out = f();
        REFERENCE.with(|r| r.set(false));
        match out {
            Ok(v) => v.to_string(),
            Err(e) => format!("{} {} {e}", e.code(), e.field()),
        }
    }

    /// The input with each value replaced in turn by wrong ones, keys dropped and unknown keys added.
    fn mutations(input: &Value, out: &mut Vec<Value>) {
        let wrong = [
            json!(null),
            json!(true),
            json!(-1),
            json!(1.5),
            json!(5_000_000_000u64),
            json!("x"),
            json!([]),
            json!([1]),
            json!({}),
            json!({"zz": 1}),
        ];
        out.extend(wrong.iter().cloned());
        match input {
            Value::Object(map) => {
                let mut extra = map.clone();
                extra.insert("zz".to_owned(), json!(1));
                out.push(Value::Object(extra));
                for (key, value) in map {
                    let mut without = map.clone();
                    without.remove(key);
                    out.push(Value::Object(without));
                    let mut inner = Vec::new();
                    mutations(value, &mut inner);
                    out.extend(inner.into_iter().map(|v| {
                        let mut m = map.clone();
                        m.insert(key.clone(), v);
                        Value::Object(m)
                    }));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let mut inner = Vec::new();
                    mutations(item, &mut inner);
                    out.extend(inner.into_iter().map(|v| {
                        let mut a = items.clone();
                        a[i] = v;
                        Value::Array(a)
                    }));
                }
            }
            _ => {}
        }
    }

    #[test]
    fn paths_and_messages_match_serde_path_to_error_on_every_fixture_and_its_mutations() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../spec-fixtures/cases");
        let mut checked = 0;
        let mut errors = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap()).unwrap();
            let function = doc["function"].as_str().unwrap();
            assert!(FUNCTIONS.contains(&function), "{function}");
            for case in doc["cases"].as_array().unwrap() {
                let mut inputs = vec![case["input"].clone()];
                mutations(&case["input"], &mut inputs);
                for input in &inputs {
                    let ours = outcome(false, || call(function, input));
                    let theirs = outcome(true, || call(function, input));
                    // The one intended difference: an array where an object belongs.
                    if array_for_object(&ours) {
                        continue;
                    }
                    assert_eq!(ours, theirs, "{function} {input}");
                    checked += 1;
                    errors += usize::from(call(function, input).is_err());
                }
            }
        }
        assert!(
            checked > 10_000 && errors > checked / 2,
            "{checked} inputs, {errors} errors"
        );
    }

    /// The two internally tagged enums as serde's derive reads them: the reference for their
    /// hand-written `Deserialize` (same names, as serde puts the name in its messages).
    mod derived {
        use crate::{MongoError, SessionState};

        /// `TransactionEvent` as serde's derive reads it.
        #[derive(serde::Deserialize, serde::Serialize)]
        #[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
        pub(super) enum TransactionEvent {
            Begin,
            StartFailed {
                error: MongoError,
            },
            CallbackReturned {
                session: SessionState,
            },
            CallbackRaised {
                session: SessionState,
                error: MongoError,
                #[serde(with = "crate::json::ms")]
                elapsed_ms: u64,
                #[serde(default, deserialize_with = "crate::json::draw::deserialize")]
                random: Option<f64>,
            },
            CommitSucceeded,
            CommitFailed {
                error: MongoError,
                #[serde(with = "crate::json::ms")]
                elapsed_ms: u64,
                #[serde(default, deserialize_with = "crate::json::draw::deserialize")]
                random: Option<f64>,
            },
        }

        /// `HttpAttempt` as serde's derive reads it.
        #[derive(serde::Deserialize, serde::Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
        pub(super) enum HttpAttempt {
            Response {
                status: u16,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                retry_after: Option<String>,
            },
            NetworkError,
        }
    }

    /// The outcome of reading `T` from `input`.
    fn read<T: serde::de::DeserializeOwned + serde::Serialize>(input: &Value, reference: bool) -> String {
        outcome(reference, || {
            crate::json::from_json_value::<T>(input).map(|v| serde_json::to_value(&v).unwrap())
        })
    }

    /// Reads `input` as `A` with this crate's reader and as `B`, its derived reference, with
    /// serde_path_to_error, and asserts that both agree; returns the outcome, or `None` for the
    /// intended difference (an array where an object belongs), which is not compared.
    fn agree<A, B>(input: &Value) -> Option<String>
    where
        A: serde::de::DeserializeOwned + serde::Serialize,
        B: serde::de::DeserializeOwned + serde::Serialize,
    {
        let ours = read::<A>(input, false);
        if array_for_object(&ours) {
            return None;
        }
        assert_eq!(ours, read::<B>(input, true), "{input}");
        Some(ours)
    }

    #[test]
    fn internally_tagged_enums_read_as_the_derive_reads_them() {
        let events = [
            json!({"event": "begin"}),
            json!({"event": "start_failed", "error": {"code": 251}}),
            json!({"event": "callback_returned", "session": "committed"}),
            json!({"event": "callback_raised", "session": "in_progress", "elapsed_ms": 5, "random": 0.5,
                   "error": {"code": 112, "labels": ["TransientTransactionError"]}}),
            json!({"event": "commit_succeeded"}),
            json!({"event": "commit_failed", "elapsed_ms": "7", "error": {"code": 50}}),
        ];
        let attempts = [
            json!({"kind": "response", "status": 503, "retry_after": "2"}),
            json!({"kind": "network_error"}),
        ];
        // A valid and a bad sibling of each enum, to put before and after the input in an array.
        let siblings = [
            (json!({"event": "begin"}), json!({"event": 0})),
            (json!({"kind": "network_error"}), json!({"kind": 0})),
        ];
        let mut checked = 0;
        let mut nested_errors = 0;
        for (event, attempt) in events.iter().zip(attempts.iter().cycle()) {
            let mut inputs = vec![event.clone(), attempt.clone(), json!({}), json!({"event": 0})];
            mutations(event, &mut inputs);
            mutations(attempt, &mut inputs);
            for input in &inputs {
                agree::<TransactionEvent, derived::TransactionEvent>(input);
                agree::<HttpAttempt, derived::HttpAttempt>(input);
                // Inside a request, under a key and in an array (as `mongodb_transaction_step`,
                // `http_next` and `mongodb_with_transaction` read them), after a valid sibling and
                // before a bad one: errors carry the key and the index of the enum they are in.
                for (good, bad) in &siblings {
                    for nested in [json!({"steps": [good, input]}), json!({"steps": [input, bad]})] {
                        let outcomes = [
                            agree::<Nested<TransactionEvent>, Nested<derived::TransactionEvent>>(&nested),
                            agree::<Nested<HttpAttempt>, Nested<derived::HttpAttempt>>(&nested),
                        ];
                        nested_errors += outcomes
                            .iter()
                            .flatten()
                            .filter(|o| o.contains(" steps[1]"))
                            .count();
                    }
                }
                checked += 1;
            }
        }
        assert!(checked > 300 && nested_errors > 500, "{checked} {nested_errors}");
    }

    /// A request holding tagged enums under a key, in an array.
    #[derive(serde::Deserialize, serde::Serialize)]
    #[serde(deny_unknown_fields)]
    struct Nested<T> {
        steps: Vec<T>,
    }

    #[test]
    fn paths_name_keys_indices_and_variants() {
        let input = json!({"errors": [{"code": 1}, {"code": "x"}], "kind": "read"});
        let e = call("mongodb_surfaced_error", &input).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_type", "errors[1].code"));
        let e = call("classify_dispatch", &json!({"failure": {"nope": 1}})).unwrap_err();
        assert_eq!(e.field(), "failure");
        let request = json!(["kv", "get", 0, 0, 2500]);
        let e = call("decide", &json!({"request": request, "reason": "KV_LOCKED"})).unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_type", "request"));
        assert!(
            e.to_string().contains("invalid type: sequence, expected struct"),
            "{e}"
        );
    }
}
