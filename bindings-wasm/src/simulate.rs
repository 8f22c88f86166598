//! A whole retry schedule replayed by the core, from JavaScript values.

use retrypolicy::Scenario;
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;
use crate::policy::Policy;
use crate::{read, to_js};

/// Replays a schedule: each attempt fails with the next of `outcomes` (a reason, or null for
/// success), `latency_ms` each; returns the timeline in its JSON form (`{steps, ending, total_ms, waited_ms}`).
#[wasm_bindgen]
pub fn simulate(
    request: &JsValue,
    outcomes: &JsValue,
    repeat_last: &JsValue,
    latency_ms: &JsValue,
    draws: &JsValue,
    policy: &Policy,
) -> Fallible<JsValue> {
    let scenario = Scenario {
        name: String::new(),
        description: String::new(),
        request: read::request(request)?,
        outcomes: read::list(outcomes, "outcomes", |v, f| {
            read::optional(v, |v| read::reason(v, f))
        })?,
        repeat_last: read::optional(repeat_last, |v| read::flag(v, "repeatLast"))?.unwrap_or_default(),
        latency_ms: read::millis(latency_ms, "latencyMs")?,
        draws: read::optional(draws, |v| read::list(v, "draws", read::number))?.unwrap_or_default(),
        policy: policy.0,
    };
    Ok(to_js(&retrypolicy::simulate(&scenario)?))
}
