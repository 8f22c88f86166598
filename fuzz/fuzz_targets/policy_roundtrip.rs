//! The policy parser: any text that parses is a policy whose printed form (`Policy::to_json`)
//! parses back to the same policy and prints the same; the value route and the JSON API agree.
#![no_main]

mod limit;

use libfuzzer_sys::fuzz_target;
use retrypolicy_wire::api::call;
use retrypolicy_wire::{parse_policy, policy_from_value};
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_policy(text);
    let through_api = call("parse_policy", &json!({ "json": text }));
    match &parsed {
        Ok(policy) => {
            let printed = policy.to_json();
            let again = parse_policy(&printed)
                .unwrap_or_else(|e| panic!("the printed policy {printed} does not parse: {e}"));
            assert_eq!(*policy, again, "{text:?} printed as {printed}");
            assert_eq!(printed, again.to_json(), "{text:?}");
            let value: Value = serde_json::from_str(text).expect("a parsed policy is JSON");
            assert_eq!(policy_from_value(&value).as_ref(), Ok(policy), "{text:?}");
            let answer = through_api.unwrap_or_else(|e| panic!("parse_policy through the API: {e}"));
            let expected: Value = serde_json::from_str(&printed).expect("the printed policy is JSON");
            assert_eq!(answer, json!({ "policy": expected }), "{text:?}");
        }
        Err(e) => {
            let _ = (e.field(), e.to_string());
            let from_api = through_api.expect_err("the JSON API accepted a policy parse_policy refuses");
            assert_eq!(e, &from_api, "{text:?}");
            // Text serde_json reads without a repeated key takes the value route to the same error.
            if e.code() != "malformed_json" {
                let value: Value = serde_json::from_str(text).expect("only malformed text fails to read");
                assert_eq!(policy_from_value(&value).as_ref(), Err(e), "{text:?}");
            }
        }
    }
});
