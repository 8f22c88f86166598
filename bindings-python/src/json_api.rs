//! The JSON-shaped APIs (MongoDB, HTTP, explain, simulate): JSON text in, the wire layer, JSON text out.

use pyo3::prelude::*;
use retrypolicy as core;

use crate::convert::{from_json, to_json};
use crate::errors::IntoPy;

/// Calls the wire layer's JSON API by function name: JSON text in, JSON text out.
#[pyfunction]
pub fn call_json(function: &str, input: &str) -> PyResult<String> {
    let value: serde_json::Value = from_json(input)?;
    Ok(retrypolicy_wire::api::call(function, &value).py()?.to_string())
}

/// Replays a scenario (the core's JSON form) and returns the timeline as JSON.
#[pyfunction]
pub fn simulate_json(text: &str) -> PyResult<String> {
    let scenario: core::Scenario = from_json(text)?;
    Ok(to_json(&core::simulate(&scenario).py()?))
}
