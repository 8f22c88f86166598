//! The flat JSON form of a [`Request`]: the operation's fields beside the request's own.

use serde::{Deserialize, Serialize};

use crate::decide::Request;
use crate::operation::{HttpMethod, KvOperation, OperationWire, Service};
use crate::reason::RetryReason;
use crate::strategy::StrategyKind;

/// The flat JSON form of a request: the operation's fields beside the request's own.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestWire {
    service: Option<Service>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    operation: Option<KvOperation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    readonly: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    method: Option<HttpMethod>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    /// Default 0; null reads as not given.
    #[serde(default)]
    attempts: Option<u32>,
    /// Default 0; null reads as not given.
    #[serde(default, with = "crate::serde_form::ms::option")]
    elapsed_ms: Option<u64>,
    #[serde(with = "crate::serde_form::ms")]
    timeout_ms: u64,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::serde_form::or_default"
    )]
    previous_reasons: Vec<RetryReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    strategy: Option<StrategyKind>,
    #[serde(
        default,
        deserialize_with = "crate::serde_form::draw::deserialize",
        skip_serializing_if = "Option::is_none"
    )]
    random: Option<f64>,
    #[serde(
        default,
        with = "crate::serde_form::ms::option",
        skip_serializing_if = "Option::is_none"
    )]
    previous_delay_ms: Option<u64>,
}

impl TryFrom<RequestWire> for Request {
    type Error = serde::de::value::Error;
    fn try_from(w: RequestWire) -> Result<Self, Self::Error> {
        let operation = OperationWire {
            service: w.service,
            operation: w.operation,
            readonly: w.readonly,
            method: w.method,
        }
        .into_operation("")
        .map_err(|e| crate::serde_form::Rejection::from_error::<serde::de::value::Error>(&e))?;
        Ok(Request {
            operation,
            idempotent: w.idempotent,
            attempts: w.attempts.unwrap_or(0),
            elapsed_ms: w.elapsed_ms.unwrap_or(0),
            timeout_ms: w.timeout_ms,
            previous_reasons: w.previous_reasons,
            strategy: w.strategy,
            random: w.random,
            previous_delay_ms: w.previous_delay_ms,
        })
    }
}

impl From<Request> for RequestWire {
    fn from(r: Request) -> Self {
        let op = OperationWire::from(r.operation);
        RequestWire {
            service: op.service,
            operation: op.operation,
            readonly: op.readonly,
            method: op.method,
            idempotent: r.idempotent,
            attempts: Some(r.attempts),
            elapsed_ms: Some(r.elapsed_ms),
            timeout_ms: r.timeout_ms,
            previous_reasons: r.previous_reasons,
            strategy: r.strategy,
            random: r.random,
            previous_delay_ms: r.previous_delay_ms,
        }
    }
}
