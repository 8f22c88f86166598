//! The classes and functions of a feature this module was built without (the HTTP module leaves
//! out budgets, breakers, KV error maps, gRPC and AWS): each exists, so the facade finds every
//! member of its backend, and each constructor or function throws the core's not-built error
//! (`unknown_name`, naming the class or function the facade shows and the feature). The JSON API's
//! functions answer likewise (the wire crate).

#[cfg(not(all(feature = "guards", feature = "couchbase", feature = "grpc", feature = "aws")))]
use wasm_bindgen::prelude::*;

#[cfg(not(all(feature = "guards", feature = "couchbase", feature = "grpc", feature = "aws")))]
use crate::errors::Fallible;

/// The error for the facade's class `class`, which needs `feature`.
#[cfg(not(all(feature = "guards", feature = "couchbase", feature = "grpc", feature = "aws")))]
fn unbuilt<T>(class: &str, feature: &str) -> Fallible<T> {
    Err(retrypolicy::features::not_built("class", class, feature).into())
}

/// The error for the facade's function `function` (the concept's name in every language), which needs `feature`.
#[cfg(not(all(feature = "grpc", feature = "aws")))]
fn unbuilt_function<T>(function: &str, feature: &str) -> Fallible<T> {
    Err(retrypolicy::features::not_built("function", function, feature).into())
}

/// No retry budget in this module: its constructor throws (the facade's `RetryBudget`).
#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
pub struct BudgetHandle;

#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
impl BudgetHandle {
    /// Throws: this module has no budgets (the `guards` feature).
    #[wasm_bindgen(constructor)]
    pub fn new(_document: &str, _state: Option<String>) -> Fallible<BudgetHandle> {
        unbuilt("RetryBudget", "guards")
    }
}

/// No circuit breaker in this module: its constructor throws (the facade's `CircuitBreaker`).
#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
pub struct BreakerHandle;

#[cfg(not(feature = "guards"))]
#[wasm_bindgen]
impl BreakerHandle {
    /// Throws: this module has no breakers (the `guards` feature).
    #[wasm_bindgen(constructor)]
    pub fn new(_document: &str, _state: Option<String>) -> Fallible<BreakerHandle> {
        unbuilt("CircuitBreaker", "guards")
    }
}

/// No KV error maps in this module: `parse` throws (the facade's `ErrorMap`).
#[cfg(not(feature = "couchbase"))]
#[wasm_bindgen]
pub struct ErrorMap;

#[cfg(not(feature = "couchbase"))]
#[wasm_bindgen]
impl ErrorMap {
    /// Throws: this module has no Couchbase classifiers (the `couchbase` feature).
    pub fn parse(_json: &str) -> Fallible<ErrorMap> {
        unbuilt("ErrorMap", "couchbase")
    }
}

/// No gRPC service config in this module: its constructor throws (the facade's `grpc.ServiceConfig`).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen]
pub struct GrpcServiceConfigHandle;

#[cfg(not(feature = "grpc"))]
#[wasm_bindgen]
impl GrpcServiceConfigHandle {
    /// Throws: this module has no gRPC rules (the `grpc` feature).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Fallible<GrpcServiceConfigHandle> {
        unbuilt("ServiceConfig", "grpc")
    }
}

/// No gRPC retry policy in this module: its constructor throws (the facade's `grpc.RetryPolicy`).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen]
pub struct GrpcRetryPolicyHandle;

#[cfg(not(feature = "grpc"))]
#[wasm_bindgen]
impl GrpcRetryPolicyHandle {
    /// Throws: this module has no gRPC rules (the `grpc` feature).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Fallible<GrpcRetryPolicyHandle> {
        unbuilt("RetryPolicy", "grpc")
    }

    /// Throws: `grpc.retry` without a policy needs the `grpc` feature too.
    pub fn none() -> Fallible<GrpcRetryPolicyHandle> {
        unbuilt_function("grpc_retry", "grpc")
    }
}

/// No gRPC hedging policy in this module: its constructor throws (the facade's `grpc.HedgingPolicy`).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen]
pub struct GrpcHedgingPolicyHandle;

#[cfg(not(feature = "grpc"))]
#[wasm_bindgen]
impl GrpcHedgingPolicyHandle {
    /// Throws: this module has no gRPC rules (the `grpc` feature).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Fallible<GrpcHedgingPolicyHandle> {
        unbuilt("HedgingPolicy", "grpc")
    }

    /// Throws: `grpc.hedge` without a policy needs the `grpc` feature too.
    pub fn none() -> Fallible<GrpcHedgingPolicyHandle> {
        unbuilt_function("grpc_hedge", "grpc")
    }
}

/// Throws: this module has no gRPC rules (the facade's `grpc.retry`).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen(js_name = grpcRetry)]
pub fn grpc_retry() -> Fallible<String> {
    unbuilt_function("grpc_retry", "grpc")
}

/// Throws: this module has no gRPC rules (the facade's `grpc.retry` with a throttling bucket).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen(js_name = grpcRetryThrottled)]
pub fn grpc_retry_throttled() -> Fallible<String> {
    unbuilt_function("grpc_retry", "grpc")
}

/// Throws: this module has no gRPC rules (the facade's `grpc.hedge`).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen(js_name = grpcHedge)]
pub fn grpc_hedge() -> Fallible<String> {
    unbuilt_function("grpc_hedge", "grpc")
}

/// Throws: this module has no gRPC rules (the facade's `grpc.hedge` with a throttling bucket).
#[cfg(not(feature = "grpc"))]
#[wasm_bindgen(js_name = grpcHedgeThrottled)]
pub fn grpc_hedge_throttled() -> Fallible<String> {
    unbuilt_function("grpc_hedge", "grpc")
}

/// No AWS retry configuration in this module: its constructor throws (the facade's `aws.RetryConfig`).
#[cfg(not(feature = "aws"))]
#[wasm_bindgen]
pub struct AwsRetryConfigHandle;

#[cfg(not(feature = "aws"))]
#[wasm_bindgen]
impl AwsRetryConfigHandle {
    /// Throws: this module has no AWS retry modes (the `aws` feature).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Fallible<AwsRetryConfigHandle> {
        unbuilt("AwsRetryConfig", "aws")
    }

    /// Throws: `aws.decide` without a configuration needs the `aws` feature too.
    pub fn standard() -> Fallible<AwsRetryConfigHandle> {
        unbuilt_function("aws_decide", "aws")
    }
}

/// Throws: this module has no AWS retry modes (the facade's `aws.decide`).
#[cfg(not(feature = "aws"))]
#[wasm_bindgen(js_name = awsDecide)]
pub fn aws_decide() -> Fallible<String> {
    unbuilt_function("aws_decide", "aws")
}

/// No adaptive rate limiter in this module: its constructor throws (the facade's `aws.AdaptiveRateLimiter`).
#[cfg(not(feature = "aws"))]
#[wasm_bindgen]
pub struct RateLimiterHandle;

#[cfg(not(feature = "aws"))]
#[wasm_bindgen]
impl RateLimiterHandle {
    /// Throws: this module has no AWS retry modes (the `aws` feature).
    #[wasm_bindgen(constructor)]
    pub fn new() -> Fallible<RateLimiterHandle> {
        unbuilt("AdaptiveRateLimiter", "aws")
    }
}
