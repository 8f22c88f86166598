//! `Policy` (the retry configuration, read from JSON by the wire layer) and the backoff calculators.

use pyo3::prelude::*;
use retrypolicy as core;

use crate::convert::{count_u32, int_in, opt_draw};
use crate::errors::IntoPy;

/// The whole retry configuration (strategy, backoff, jitter, compat), loaded from JSON.
#[pyclass(frozen, module = "retrypolicy._lowlevel")]
#[derive(Clone)]
pub struct Policy {
    /// The core policy.
    pub inner: core::Policy,
}

/// The given policy, or the RFC 0049 default.
pub fn or_default(policy: Option<&Bound<'_, Policy>>) -> core::Policy {
    policy.map(|p| p.get().inner).unwrap_or_default()
}

#[pymethods]
impl Policy {
    /// The RFC 0049 default: best effort, 1..500 ms ×2, no jitter, no compat options.
    #[new]
    fn new() -> Self {
        Policy {
            inner: core::Policy::default(),
        }
    }
    /// Parses and validates a policy document.
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Policy {
            inner: retrypolicy_wire::parse_policy(&crate::convert::text("json", text)?).py()?,
        })
    }
    /// The normalized policy document.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }
    /// Equal when every setting is equal.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Policy>().is_ok_and(|o| o.get().inner == self.inner)
    }
    /// `Policy(<normalized document>)`.
    fn __repr__(&self) -> String {
        format!("Policy({})", self.to_json())
    }
}

/// RFC 0049's controlled backoff, in milliseconds, after `attempt` retries.
#[pyfunction]
pub fn controlled_backoff_ms(attempt: &Bound<'_, PyAny>) -> PyResult<u64> {
    Ok(core::controlled_backoff(count_u32("attempt", attempt)?))
}

/// The best-effort delay, in milliseconds, under `policy`'s backoff and jitter.
#[pyfunction]
#[pyo3(signature = (policy, attempt, random = None, previous_delay_ms = None))]
pub fn backoff_delay_ms(
    policy: &Bound<'_, Policy>,
    attempt: &Bound<'_, PyAny>,
    random: Option<&Bound<'_, PyAny>>,
    previous_delay_ms: Option<&Bound<'_, PyAny>>,
) -> PyResult<u64> {
    let p = policy.get().inner;
    let attempt = count_u32("attempt", attempt)?;
    let random = random.map(|r| opt_draw("random", r)).transpose()?.flatten();
    let previous = previous_delay_ms
        .filter(|v| !v.is_none())
        .map(|v| int_in::<u64>("previous_delay_ms", v, "0..=18446744073709551615"))
        .transpose()?;
    core::backoff_delay(&p.backoff, p.jitter, attempt, random, previous).py()
}
