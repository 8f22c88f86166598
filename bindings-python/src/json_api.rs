//! The JSON-shaped APIs (MongoDB, HTTP, explain, simulate): JSON text in, the wire layer, JSON text out.

use pyo3::prelude::*;
use retrypolicy as core;

use crate::convert::{from_json, text, to_json};
use crate::errors::IntoPy;

/// Calls the wire layer's JSON API by function name: JSON text in, JSON text out.
#[pyfunction]
pub fn call_json(function: &Bound<'_, PyAny>, input: &Bound<'_, PyAny>) -> PyResult<String> {
    let value: serde_json::Value = from_json(&text("input", input)?)?;
    Ok(retrypolicy_wire::api::call(&text("function", function)?, &value)
        .py()?
        .to_string())
}

/// Replays a scenario (the core's JSON form) and returns the timeline as JSON.
#[pyfunction]
pub fn simulate_json(scenario: &Bound<'_, PyAny>) -> PyResult<String> {
    let scenario: core::Scenario = from_json(&text("scenario", scenario)?)?;
    Ok(to_json(&core::simulate(&scenario).py()?))
}
