//! The JSON API by function name: any bytes, read as `<function name>\n<JSON text>`, must come
//! back as an answer or a typed error, never a panic, and the same answer every time.
//!
//! A first line that is not one of `api::FUNCTIONS` must be refused as `unknown_name`; the input
//! then goes to the function the name's bytes pick, so every mutation still reaches a real one.
#![no_main]

mod limit;

use libfuzzer_sys::fuzz_target;
use retrypolicy::{Policy, Request};
use retrypolicy_wire::api::{call, FUNCTIONS};
use retrypolicy_wire::{from_json_str, Error};
use serde_json::Value;

/// The function the first line names, or (for any other line) the one its bytes pick.
fn function_for(name: &[u8]) -> &'static str {
    let text = String::from_utf8_lossy(name);
    if let Some(known) = FUNCTIONS.iter().find(|f| **f == text) {
        return known;
    }
    let refused = call(&text, &Value::Null).expect_err("an unknown function name must be refused");
    assert_eq!(refused.code(), "unknown_name", "{refused}");
    let pick = name.iter().fold(0usize, |acc, b| {
        acc.wrapping_mul(31).wrapping_add(usize::from(*b))
    });
    FUNCTIONS[pick % FUNCTIONS.len()]
}

/// Every part of a typed error renders without panicking, and names a stable code.
fn check_error(e: &Error) {
    assert!(!e.code().is_empty(), "an error without a code: {e:?}");
    let _ = (e.field(), e.to_string());
}

/// The JSON text read as a value, a request and a policy: a typed error or a value, and text
/// serde_json cannot read is always `malformed_json`.
fn read_text(text: &str) -> Option<Value> {
    let plain = serde_json::from_str::<Value>(text);
    let value = from_json_str::<Value>(text);
    match (&plain, &value) {
        (Err(_), Ok(_)) => panic!("from_json_str read text serde_json refuses: {text:?}"),
        (_, Err(e)) => {
            assert_eq!(e.code(), "malformed_json", "{e}");
            check_error(e);
        }
        (Ok(_), Ok(_)) => {}
    }
    if let Err(e) = from_json_str::<Request>(text) {
        check_error(&e);
    }
    if let Err(e) = from_json_str::<Policy>(text) {
        check_error(&e);
    }
    value.ok()
}

fuzz_target!(|data: &[u8]| {
    let (name, rest) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&data[..0], data),
    };
    let function = function_for(name);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let Some(input) = read_text(text) else {
        return;
    };
    let first = call(function, &input);
    match &first {
        Ok(out) => {
            serde_json::to_string(out).expect("an answer always serializes");
        }
        Err(e) => check_error(e),
    }
    // A pure function: no state is kept between calls.
    assert_eq!(
        first,
        call(function, &input),
        "{function} answered twice differently"
    );
});
