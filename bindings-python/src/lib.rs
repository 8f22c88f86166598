//! The native module `retrypolicy._lowlevel`: conversion and error mapping over the core, nothing
//! else. One file per thing the host handles; the Python package (`python/retrypolicy/`) wraps it.

use pyo3::prelude::*;

mod aws;
mod breaker;
mod budget;
mod classify;
mod convert;
mod decision;
mod errors;
mod grpc;
mod json_api;
mod operation;
mod policy;
mod reason;
mod request;
mod run;
mod strategy;

/// Panics on purpose, to show a panic reaches Python as pyo3's `PanicException` and the module
/// keeps working (the `testing` feature only; never in the shipped module).
#[cfg(feature = "testing")]
#[pyfunction]
fn panic_for_test() {
    panic!("retrypolicy: a panic on purpose (the testing feature)");
}

/// The native module.
#[pymodule]
fn _lowlevel(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", retrypolicy::VERSION)?;
    m.add("ERROR_CODES", retrypolicy::Error::ALL_CODES.to_vec())?;
    m.add_class::<operation::Operation>()?;
    m.add_class::<request::Request>()?;
    m.add_class::<policy::Policy>()?;
    m.add_class::<decision::Decision>()?;
    m.add_class::<classify::Classification>()?;
    m.add_class::<budget::RetryBudget>()?;
    m.add_class::<budget::BudgetVerdict>()?;
    m.add_class::<breaker::CircuitBreaker>()?;
    m.add_class::<breaker::BreakerVerdict>()?;
    m.add_class::<breaker::BreakerChange>()?;
    m.add_class::<run::RunConfig>()?;
    m.add_class::<run::Run>()?;
    m.add_class::<run::RunStep>()?;
    m.add_class::<run::RunStats>()?;
    m.add_class::<strategy::BestEffort>()?;
    m.add_class::<strategy::FailFast>()?;
    m.add_class::<grpc::ServiceConfig>()?;
    m.add_class::<grpc::RetryPolicy>()?;
    m.add_class::<grpc::HedgingPolicy>()?;
    m.add_class::<grpc::GrpcRetryDecision>()?;
    m.add_class::<grpc::GrpcHedgeStep>()?;
    m.add_class::<aws::AwsRetryConfig>()?;
    m.add_class::<aws::AwsDecision>()?;
    m.add_class::<aws::AdaptiveRateLimiter>()?;
    m.add_class::<aws::AcquireVerdict>()?;
    m.add_class::<aws::RateUpdate>()?;
    m.add_function(wrap_pyfunction!(grpc::grpc_retry, m)?)?;
    m.add_function(wrap_pyfunction!(grpc::grpc_hedge, m)?)?;
    m.add_function(wrap_pyfunction!(aws::aws_decide, m)?)?;
    m.add_function(wrap_pyfunction!(decision::decide, m)?)?;
    m.add_function(wrap_pyfunction!(decision::decide_before_strategy, m)?)?;
    m.add_function(wrap_pyfunction!(decision::decide_after_strategy, m)?)?;
    m.add_function(wrap_pyfunction!(decision::decide_with_budget, m)?)?;
    m.add_function(wrap_pyfunction!(decision::explain_with_budget, m)?)?;
    #[cfg(feature = "bench")]
    m.add_function(wrap_pyfunction!(decision::_noop_decide, m)?)?;
    #[cfg(feature = "testing")]
    m.add_function(wrap_pyfunction!(panic_for_test, m)?)?;
    m.add_function(wrap_pyfunction!(reason::reason_table, m)?)?;
    m.add_function(wrap_pyfunction!(reason::parse_reason, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_kv, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_query, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_analytics, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_search, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_views, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_dispatch, m)?)?;
    m.add_function(wrap_pyfunction!(policy::controlled_backoff_ms, m)?)?;
    m.add_function(wrap_pyfunction!(policy::backoff_delay_ms, m)?)?;
    m.add_function(wrap_pyfunction!(json_api::simulate_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_api::call_json, m)?)?;
    Ok(())
}
