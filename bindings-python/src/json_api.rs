//! The JSON-shaped APIs (MongoDB, HTTP, explain, simulate): JSON text in, the wire layer, JSON text out.

use pyo3::prelude::*;
use retrypolicy as core;

use crate::convert::{from_json, text, to_json};
use crate::errors::IntoPy;

/// Calls the wire layer's JSON API by function name: JSON text in, JSON text out. The call runs
/// with the GIL released (a storm or a long replay takes as long as its input: other threads run).
#[pyfunction]
pub fn call_json(py: Python<'_>, function: &Bound<'_, PyAny>, input: &Bound<'_, PyAny>) -> PyResult<String> {
    let (input, function) = (text("input", input)?, text("function", function)?);
    py.detach(|| {
        let value: serde_json::Value = from_json(&input)?;
        retrypolicy_wire::api::call(&function, &value)
            .map(|out| out.to_string())
            .py()
    })
}

/// Replays a scenario (the core's JSON form) and returns the timeline as JSON, with the GIL released.
#[pyfunction]
pub fn simulate_json(py: Python<'_>, scenario: &Bound<'_, PyAny>) -> PyResult<String> {
    let scenario = text("scenario", scenario)?;
    py.detach(|| {
        let scenario: core::Scenario = from_json(&scenario)?;
        Ok(to_json(&core::simulate(&scenario).py()?))
    })
}
