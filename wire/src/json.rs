//! JSON text and values in, typed errors out: derived serde with `serde_path_to_error` for the
//! field path, and every failure mapped to the core's [`Error`] without reading input text back
//! out of a message (the value an error names is read from the input at the error's path).

use retrypolicy::error::shorten;
use retrypolicy::serde_form::Rejection;
use retrypolicy::units;
use retrypolicy::Error;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::{Path, Segment};

/// Parses JSON text into `T`, reporting failures as typed errors naming the field. A key that
/// appears twice in one object is refused (`malformed_json`), not silently read as its last value.
pub fn from_json_str<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    // Parse to a value first: serde_json reports some type errors met while streaming (a number
    // where an enum belongs) as syntax errors, and only true syntax errors are malformed JSON.
    let value: Value = serde_json::from_str(text).map_err(|e| malformed(&e))?;
    serde_json::from_str::<UniqueKeys>(text).map_err(|e| malformed(&e))?;
    from_json_value(&value)
}

/// [`from_json_str`] that reads a valid document straight into `T`, never building its tree (for
/// long inputs: 10^6 budget events); a document it refuses is read again by [`from_json_str`], so
/// its error is the same typed error, naming the same field.
pub fn from_json_str_streaming<T: DeserializeOwned>(text: &str) -> Result<T, Error> {
    if serde_json::from_str::<UniqueKeys>(text).is_ok() {
        if let Ok(value) = serde_json::from_str::<T>(text) {
            return Ok(value);
        }
    }
    from_json_str(text)
}

/// Walks a JSON document and fails at the first object that repeats a key (which `Value` would
/// keep only once, its last).
struct UniqueKeys;

impl<'de> serde::Deserialize<'de> for UniqueKeys {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for UniqueKeys {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if !seen.insert(key.clone()) {
                let key = shorten(&key);
                return Err(serde::de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            map.next_value::<UniqueKeys>()?;
        }
        Ok(UniqueKeys)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        while seq.next_element::<UniqueKeys>()?.is_some() {}
        Ok(UniqueKeys)
    }

    fn visit_bool<E>(self, _: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_i64<E>(self, _: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_u64<E>(self, _: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_f64<E>(self, _: f64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_str<E>(self, _: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys)
    }
}

/// Converts an already-parsed JSON value into `T`, reporting failures as typed errors naming the field.
pub fn from_json_value<T: DeserializeOwned>(value: &Value) -> Result<T, Error> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().clone();
        let e = e.into_inner();
        if e.is_syntax() || e.is_eof() || e.is_io() {
            return malformed(&e);
        }
        let (text, pointer) = locate(&path);
        let msg = e.to_string();
        let (text, pointer) = inside_buffered::<T>(value, text, pointer, &msg);
        typed(&text, value.pointer(&pointer), &msg)
    })
}

/// Children of one value [`inside_buffered`] tries at most (more: the error stays where it is).
const MAX_PROBED_CHILDREN: usize = 32;

/// Input values [`inside_buffered`] may read in all, over every probe (a probe reads the whole
/// input again): an error in a long input stays where serde placed it.
const PROBE_BUDGET: usize = 4_000_000;

/// Where inside the value at `pointer` an error serde placed at it lies. serde reads an internally
/// tagged enum (a run's outcome `{"kind": "grpc", "status": ...}`, an HTTP attempt) from a copy of
/// its fields, out of the path's sight, so an error in one of them names the whole object (and
/// echoes it). The field is the one child (key or element) whose removal changes the error, not
/// counting the enum's tag (serde places an error in the tag itself: a null there moves the error's
/// path to it); followed down while one child stands out. Each probe reads the input again, so the
/// probes are bounded ([`MAX_PROBED_CHILDREN`], [`PROBE_BUDGET`]).
fn inside_buffered<T: DeserializeOwned>(
    root: &Value,
    mut text: String,
    mut pointer: String,
    msg: &str,
) -> (String, String) {
    // Errors about the object itself: a field missing or unknown in it (serde's, or a core type's
    // rejection naming the field).
    if msg.starts_with("missing field `")
        || msg.starts_with("unknown field `")
        || Rejection::ALL
            .iter()
            .any(|r| !r.field.is_empty() && r.to_string() == msg)
    {
        return (text, pointer);
    }
    let error_of = |probe: &Value| -> Option<(String, String)> {
        serde_path_to_error::deserialize::<_, T>(probe)
            .err()
            .map(|e| (locate(e.path()).0, e.inner().to_string()))
    };
    let mut budget = PROBE_BUDGET / values_in(root).max(1);
    let original = (text.clone(), msg.to_owned());
    while let Some(at) = root.pointer(&pointer) {
        if variant_is_a_key(msg, Some(at)) {
            break;
        }
        let children: Vec<String> = match at {
            Value::Object(map) => map.keys().cloned().collect(),
            Value::Array(items) => (0..items.len()).map(|i| i.to_string()).collect(),
            _ => break,
        };
        if children.is_empty() || children.len() > MAX_PROBED_CHILDREN || budget < 2 * children.len() {
            break;
        }
        budget -= 2 * children.len();
        let child_pointer =
            |child: &str| format!("{pointer}/{}", child.replace('~', "~0").replace('/', "~1"));
        let with = |child: &str, value: Option<Value>| {
            let mut probe = root.clone();
            match (probe.pointer_mut(&pointer), value) {
                (Some(Value::Object(map)), None) => drop(map.remove(child)),
                (Some(Value::Array(items)), None) => drop(items.remove(child.parse().unwrap_or_default())),
                (Some(Value::Object(map)), Some(v)) => drop(map.insert(child.to_owned(), v)),
                _ => {}
            }
            probe
        };
        let culprits: Vec<&String> = children
            .iter()
            .filter(|c| error_of(&with(c, None)).as_ref() != Some(&original))
            .filter(|c| {
                let field = join_child(&text, c, at.is_array());
                at.is_array() || error_of(&with(c, Some(Value::Null))).is_none_or(|(path, _)| path != field)
            })
            .collect();
        let [culprit] = culprits[..] else { break };
        text = join_child(&text, culprit, at.is_array());
        pointer = child_pointer(culprit);
    }
    (text, pointer)
}

/// `path` with a child: `.key`, or `[index]` for an array's element.
fn join_child(path: &str, child: &str, element: bool) -> String {
    if element {
        format!("{path}[{child}]")
    } else {
        join(path, child)
    }
}

/// How many values `v` holds, itself included.
fn values_in(v: &Value) -> usize {
    match v {
        Value::Object(map) => 1 + map.values().map(values_in).sum::<usize>(),
        Value::Array(items) => 1 + items.iter().map(values_in).sum::<usize>(),
        _ => 1,
    }
}

/// Parses one snake_case name (a strategy, jitter mode, service, ...) into `T`, naming `field` in errors.
pub fn parse_name<T: DeserializeOwned>(field: &str, name: &str) -> Result<T, Error> {
    from_json_value::<T>(&Value::String(name.to_owned())).map_err(|e| e.with_field(field))
}

/// The error for text that is not JSON (or repeats a key); serde_json's syntax messages hold none
/// of the input, and a repeated key is echoed cut short.
pub fn malformed(e: &serde_json::Error) -> Error {
    let full = e.to_string();
    let message = full.split(" at line ").next().unwrap_or(&full).to_owned();
    Error::MalformedJson {
        message,
        line: e.line(),
        column: e.column(),
    }
}

fn join(path: &str, name: &str) -> String {
    match (path.is_empty(), name.is_empty()) {
        (_, true) => path.to_owned(),
        (true, false) => name.to_owned(),
        (false, false) => format!("{path}.{name}"),
    }
}

/// The path as text (`request.previous_reasons[0]`), and as a JSON pointer to the input value
/// found there (`/request/previous_reasons/0`).
fn locate(path: &Path) -> (String, String) {
    let mut text = String::new();
    let mut pointer = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => {
                text.push_str(&format!("[{index}]"));
                pointer.push_str(&format!("/{index}"));
            }
            Segment::Map { key } => {
                if !text.is_empty() {
                    text.push('.');
                }
                text.push_str(&shorten(key));
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    (text, pointer)
}

/// The input value as an error message shows it: a string as is, anything else as compact
/// JSON, cut short either way.
fn render(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => shorten(s),
        Some(Value::Number(n)) => number_text(n),
        Some(v) => shorten(&v.to_string()),
        None => String::new(),
    }
}

/// A JSON number as messages show it: integers as read, floats through the core's `number_text`
/// (a whole float such as 2^64 as its exact digits).
fn number_text(n: &serde_json::Number) -> String {
    match n.as_f64().filter(|_| n.is_f64()) {
        Some(x) => shorten(&units::number_text(x)),
        None => n.to_string(),
    }
}

/// Whether serde refused a float for an integer field. JSON has one number type: a fraction (or
/// a float) where a whole number is expected is a number out of the field's range, as in
/// JavaScript, and as Python's binding reads a float given for an int.
fn fraction_for_integer(msg: &str) -> bool {
    let expected = expected_of(msg);
    msg.starts_with("invalid type: floating point `")
        && matches!(
            expected.as_str(),
            "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32" | "i64"
        )
}

/// Whether serde's "unknown variant" is a key of the object at the path (an object given where a
/// name is expected), not a name given as a value (then the path may be the enclosing object's).
fn variant_is_a_key(msg: &str, at: Option<&Value>) -> bool {
    let variant = msg.split('`').nth(1).unwrap_or_default();
    matches!(at, Some(Value::Object(map)) if map.contains_key(variant))
}

/// What serde says the field accepts: the derive's static text after the message's last
/// "expected " (serde writes the input's value before it).
fn expected_of(msg: &str) -> String {
    msg.rsplit_once("expected ")
        .map(|(_, e)| e.strip_prefix("one of ").unwrap_or(e).replace('`', ""))
        .unwrap_or_default()
}

/// A Rust integer type's name as the whole numbers it holds (`u16` is "a whole number from 0 to
/// 65535"): what a user can act on; any other text as it is.
fn integer_range(expected: &str) -> String {
    let range = match expected {
        "u8" => "0 to 255",
        "u16" => "0 to 65535",
        "u32" => "0 to 4294967295",
        "u64" => "0 to 18446744073709551615",
        "i8" => "-128 to 127",
        "i16" => "-32768 to 32767",
        "i32" => "-2147483648 to 2147483647",
        "i64" => "-9223372036854775808 to 9223372036854775807",
        other => return other.to_owned(),
    };
    format!("a whole number from {range}")
}

/// The JSON kind of a value, for "expected X, found Y" messages.
fn kind_of(value: Option<&Value>) -> String {
    match value {
        Some(Value::Null) => "null".to_owned(),
        Some(Value::Bool(b)) => format!("boolean {b}"),
        Some(Value::Number(n)) => format!("number {}", number_text(n)),
        Some(Value::String(s)) => format!("string {:?}", shorten(s)),
        Some(Value::Array(_)) => "an array".to_owned(),
        Some(Value::Object(_)) => "an object".to_owned(),
        None => "nothing".to_owned(),
    }
}

/// The typed error for serde's message `msg` about the input value `at`, found at `path`.
fn typed(path: &str, at: Option<&Value>, msg: &str) -> Error {
    let path = path.to_owned();
    let msg = msg.to_owned();
    if let Some(r) = Rejection::ALL.iter().find(|r| r.to_string() == msg) {
        let field = join(&path, r.field);
        let field = if field.is_empty() {
            "(document)".to_owned()
        } else {
            field
        };
        let value = match r.field {
            "" => render(at),
            name => render(at.and_then(|v| v.get(name))),
        };
        return rejected(r, field, value);
    }
    let field = if path.is_empty() {
        "(document)".to_owned()
    } else {
        path.clone()
    };
    if msg.starts_with("unknown field `") {
        // Name the key from the input itself: the longest key the message starts with (a key
        // may itself hold "`," and so prefix-match a shorter, valid key).
        let key = at.and_then(Value::as_object).and_then(|o| {
            o.keys()
                .filter(|k| msg.starts_with(&format!("unknown field `{k}`,")))
                .max_by_key(|k| k.len())
        });
        return Error::UnknownField {
            field: match key {
                Some(k) => join(&path, &shorten(k)),
                None => field,
            },
        };
    }
    if let Some(rest) = msg.strip_prefix("missing field `") {
        // Field names in this message are the derive's own (static) names.
        let name = rest.split('`').next().unwrap_or_default();
        return Error::MissingField {
            field: join(&path, name),
        };
    }
    if msg.starts_with("unknown variant `") && !variant_is_a_key(&msg, at) {
        return Error::UnknownName {
            field,
            value: render(at),
            expected: expected_of(&msg),
        };
    }
    if msg.starts_with("unknown variant `") {
        // serde read an object's key as the variant: the input is an object, not a name.
        return Error::InvalidType {
            field,
            message: format!("expected a name, found {}", kind_of(at)),
        };
    }
    if msg.starts_with("invalid value: integer `") || fraction_for_integer(&msg) {
        return Error::OutOfRange {
            field,
            value: render(at),
            expected: integer_range(&expected_of(&msg)),
        };
    }
    let message = if msg.starts_with("invalid type: ") || msg.starts_with("invalid value: ") {
        format!("expected {}, found {}", expected_of(&msg), kind_of(at))
    } else {
        shorten(&msg)
    };
    Error::InvalidType { field, message }
}

/// The typed error for a core type's [`Rejection`] at `field`, naming the input's `value`.
fn rejected(r: &Rejection, field: String, value: String) -> Error {
    match r.code {
        "invalid_duration" => Error::InvalidDuration { field, value },
        "invalid_random" => Error::InvalidRandom { field, value },
        "unknown_reason" => Error::UnknownReason { field, value },
        "unsupported_version" => Error::UnsupportedVersion { value },
        "missing_field" => Error::MissingField { field },
        "unknown_field" => Error::UnknownField { field },
        _ => Error::OutOfRange {
            field,
            value,
            expected: r.expected.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retrypolicy::{Policy, Request};
    use serde_json::json;

    #[test]
    fn a_whole_float_is_echoed_with_its_exact_digits() {
        let e = crate::policy_from_value(
            &json!({"backoff": {"kind": "fixed", "delay_ms": 18446744073709551616.0_f64}}),
        )
        .unwrap_err();
        assert_eq!(e.code(), "invalid_duration");
        assert!(e.to_string().contains(" 18446744073709551616:"), "{e}");
        let e = crate::policy_from_value(&json!({"backoff": {"kind": "exponential", "factor": "2"}}))
            .unwrap_err();
        assert!(e.to_string().contains("found string \"2\""), "{e}");
    }

    #[test]
    fn input_text_cannot_choose_the_code_or_the_field() {
        let forged = Rejection::VERSION.to_string();
        let input =
            json!({"service": "kv", "operation": forged, "attempts": 0, "elapsed_ms": 0, "timeout_ms": 1});
        let e = from_json_value::<Request>(&input).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_name", "operation"));
        let input = json!({"service": "kv", "operation": "\u{1}unsupported_version\u{1}pwned\u{1}",
                           "attempts": 0, "elapsed_ms": 0, "timeout_ms": 1});
        let e = from_json_value::<Request>(&input).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_name", "operation"));
    }

    #[test]
    fn rejections_name_the_field_and_the_input_value() {
        let e = from_json_str::<Policy>(r#"{"backoff": {"kind": "exponential", "min_ms": 9, "max_ms": 3}}"#)
            .unwrap_err();
        assert_eq!((e.code(), e.field()), ("out_of_range", "backoff.min_ms"));
        assert!(e.to_string().contains(": 9 is out of range"), "{e}");
        let e = from_json_str::<Request>(
            r#"{"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": -4, "timeout_ms": 1}"#,
        )
        .unwrap_err();
        assert_eq!((e.code(), e.field()), ("invalid_duration", "elapsed_ms"));
        assert!(e.to_string().contains("-4"), "{e}");
        let e =
            from_json_str::<Request>(r#"{"service": "kv", "attempts": 0, "elapsed_ms": 0, "timeout_ms": 1}"#)
                .unwrap_err();
        assert_eq!((e.code(), e.field()), ("missing_field", "operation"));
        let e = from_json_str::<Policy>(r#"{"version": 2}"#).unwrap_err();
        assert_eq!(e.code(), "unsupported_version");
        let e = from_json_str::<Policy>(r#"{"jitter": "full", "surprise": 1}"#).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_field", "surprise"));
    }

    #[test]
    fn echoed_input_is_cut_short() {
        let long = "x".repeat(10_000);
        let input =
            json!({"service": "kv", "operation": long, "attempts": 0, "elapsed_ms": 0, "timeout_ms": 1});
        let e = from_json_value::<Request>(&input).unwrap_err();
        assert!(e.to_string().len() < 400, "{} bytes", e.to_string().len());
        let e = from_json_value::<Policy>(&json!({ long.clone(): 1 })).unwrap_err();
        assert!(e.field().len() <= 100, "{}", e.field());
    }

    #[test]
    fn every_refusal_inside_a_conversion_is_a_listed_rejection() {
        // Each misplaced or missing field of an operation and of a backoff, and each range error,
        // comes back as its own typed error, never as the unlisted fallback.
        let services = [
            "kv",
            "query",
            "analytics",
            "search",
            "views",
            "cluster_manager",
            "management",
        ];
        let extras = [
            ("operation", json!("get")),
            ("readonly", json!(true)),
            ("method", json!("GET")),
        ];
        for service in services {
            for extra in extras.iter().cloned().map(Some).chain([None]) {
                let mut r = json!({"service": service, "attempts": 0, "elapsed_ms": 0, "timeout_ms": 1});
                if let Some((k, v)) = extra {
                    r[k] = v;
                }
                if let Err(e) = from_json_value::<Request>(&r) {
                    assert!(!e.to_string().contains("unlisted"), "{r}: {e}");
                    assert_ne!(e.code(), "invalid_type", "{r}: {e}");
                }
            }
        }
        let kinds = ["exponential", "controlled", "fixed"];
        let fields = [
            ("min_ms", json!(1)),
            ("max_ms", json!(5)),
            ("factor", json!(0.5)),
            ("first", json!("zero")),
            ("delay_ms", json!(3)),
        ];
        for kind in kinds {
            for (field, value) in &fields {
                let p = json!({"backoff": {"kind": kind, field.to_string(): value}});
                if let Err(e) = from_json_value::<Policy>(&p) {
                    assert!(!e.to_string().contains("unlisted"), "{p}: {e}");
                    assert_ne!(e.code(), "invalid_type", "{p}: {e}");
                }
            }
        }
    }

    #[test]
    fn a_key_holding_a_backtick_cannot_name_a_valid_field() {
        // Found in review: a key `session`, x` made the error name the valid key `session`.
        #[cfg(feature = "mongodb")]
        {
            let event = json!({"event": "callback_returned", "session": "in_progress", "session`, x": 1});
            let e = from_json_value::<retrypolicy::TransactionEvent>(&event).unwrap_err();
            assert_eq!((e.code(), e.field()), ("unknown_field", "session`, x"));
        }
        let policy = json!({"jitter": "none", "jitter`, expected": 1});
        let e = from_json_value::<Policy>(&policy).unwrap_err();
        assert_eq!((e.code(), e.field()), ("unknown_field", "jitter`, expected"));
    }

    #[test]
    fn a_repeated_key_is_refused_not_read_as_its_last_value() {
        let e = from_json_str::<Policy>(r#"{"jitter": "full", "jitter": "none"}"#).unwrap_err();
        assert_eq!(e.code(), "malformed_json");
        assert!(e.to_string().contains("duplicate key \"jitter\""), "{e}");
        let nested = r#"{"service": "kv", "operation": "get", "attempts": 0, "elapsed_ms": 0,
                         "timeout_ms": 1, "previous_reasons": [], "x": {"a": 1, "a": 2}}"#;
        assert_eq!(
            from_json_str::<Request>(nested).unwrap_err().code(),
            "malformed_json"
        );
        let fine = r#"{"backoff": {"kind": "fixed", "delay_ms": 5}, "jitter": "none"}"#;
        assert!(from_json_str::<Policy>(fine).is_ok());
    }
}
