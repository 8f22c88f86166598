//! gRPC's service config, the part gRFC A6 defines: per-method `retryPolicy` or `hedgingPolicy`,
//! validated as A6 asks ("Validation of retryPolicy", "Validation of hedgingPolicy", "Validation of
//! retryThrottling"), method configs matched by name (grpc/grpc `doc/service_config.md` and
//! `service_config.proto`: the exact method wins, then the service's default, then the default
//! config), and `retryThrottling` as the core's token bucket.
//!
//! The document is gRPC's own JSON (camelCase keys). Fields gRPC defines elsewhere in a service
//! config or a method config (`loadBalancingPolicy`, `timeout`, `waitForReady`, ...) are ignored, as
//! gRPC ignores what it does not use; inside `retryPolicy`, `hedgingPolicy` and `retryThrottling` an
//! unknown field is an error, so a misspelt key does not silently turn retries off.

use serde::{Deserialize, Serialize};

use super::code::CodeSet;
use crate::budget::{BudgetConfig, BudgetDocument, BudgetKind};
use crate::error::Error;

/// The client's own cap on `maxAttempts` by default (gRFC A6, "Limits on Retries and Hedges").
pub const DEFAULT_MAX_ATTEMPTS_CAP: u32 = 5;

/// The source of the service config's rules.
pub const GRPC_CONFIG_SOURCE: &str =
    "gRFC A6 Client Retries (grpc/proposal A6-client-retries.md): Validation of \
     retryPolicy, hedgingPolicy and retryThrottling; Limits on Retries and Hedges; grpc/grpc \
     doc/service_config.md (method config matching)";

/// A service config as gRPC writes it (only what A6 reads).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(
    remote = "Self",
    rename_all = "camelCase",
    expecting = "a service config (an object)"
)]
pub struct ServiceConfigDocument {
    /// The method configs.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub method_config: Vec<MethodConfigDocument>,
    /// The per-server throttling of retries and hedges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_throttling: Option<RetryThrottlingDocument>,
}

/// One method config: the names it applies to and its policy.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(
    remote = "Self",
    rename_all = "camelCase",
    expecting = "a method config (an object)"
)]
pub struct MethodConfigDocument {
    /// The methods it applies to; an empty list is skipped.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub name: Vec<MethodName>,
    /// The retry policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<RetryPolicyDocument>,
    /// The hedging policy (only one of the two may be set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hedging_policy: Option<HedgingPolicyDocument>,
}

/// A method name: a service and a method; an empty or absent method names the service's default,
/// and an empty service (then no method) the default config.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields, expecting = "a method name (an object)")]
pub struct MethodName {
    /// The fully qualified service, e.g. `helloworld.Greeter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// The method, e.g. `SayHello`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

/// `retryPolicy` as written.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(
    remote = "Self",
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "a retryPolicy (an object)"
)]
pub struct RetryPolicyDocument {
    /// Attempts in all, the original included: an integer greater than 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<f64>,
    /// A proto3 JSON duration, e.g. `"0.1s"`, greater than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_backoff: Option<String>,
    /// A proto3 JSON duration, greater than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_backoff: Option<String>,
    /// Greater than 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_multiplier: Option<f64>,
    /// The codes to retry: non-empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable_status_codes: Option<CodeSet>,
}

/// `hedgingPolicy` as written.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(
    remote = "Self",
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "a hedgingPolicy (an object)"
)]
pub struct HedgingPolicyDocument {
    /// Attempts in all, the original included: an integer greater than 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<f64>,
    /// A proto3 JSON duration; absent or `"0s"` sends every attempt at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hedging_delay: Option<String>,
    /// The codes after which other hedges may still succeed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_fatal_status_codes: Option<CodeSet>,
}

/// `retryThrottling` as written.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(
    remote = "Self",
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "a retryThrottling (an object)"
)]
pub struct RetryThrottlingDocument {
    /// An integer in (0, 1000].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<f64>,
    /// Greater than 0, read to the thousandth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ratio: Option<f64>,
}

// A document of another JSON kind (an array read field by field) is refused, not read as empty.
crate::serde_form::objects_only!(
    ServiceConfigDocument,
    MethodConfigDocument,
    MethodName,
    RetryPolicyDocument,
    HedgingPolicyDocument,
    RetryThrottlingDocument,
);

/// A validated retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RetryPolicy {
    /// Attempts in all, after the client's cap.
    pub max_attempts: u32,
    /// The first retry's bound, in ns.
    #[serde(with = "crate::serde_form::ms")]
    pub initial_backoff_ns: u64,
    /// The bound's cap, in ns.
    #[serde(with = "crate::serde_form::ms")]
    pub max_backoff_ns: u64,
    /// The bound's growth per retry.
    pub backoff_multiplier: f64,
    /// The codes retried.
    pub retryable_status_codes: CodeSet,
}

/// A validated hedging policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HedgingPolicy {
    /// Attempts in all, after the client's cap.
    pub max_attempts: u32,
    /// The wait between hedges, in ns (0: every attempt at once).
    #[serde(with = "crate::serde_form::ms")]
    pub hedging_delay_ns: u64,
    /// The codes after which hedging goes on.
    pub non_fatal_status_codes: CodeSet,
}

/// The policy a method config gives its methods.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MethodPolicy {
    /// Neither policy: the RPC is not retried or hedged (transparent retries still happen).
    None,
    /// Retry on the codes of the policy.
    Retry(RetryPolicy),
    /// Hedge.
    Hedging(HedgingPolicy),
}

/// A validated service config: each method config's names and policy, and the throttling bucket.
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceConfig {
    methods: Vec<(Vec<(String, String)>, MethodPolicy)>,
    throttling: Option<BudgetConfig>,
}

/// The client's side of the rules: its cap on `maxAttempts` (a channel argument in gRPC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientOptions {
    /// Policies asking for more attempts get this many (A6: 5 unless the client changes it).
    pub max_attempts_cap: u32,
}

impl ClientOptions {
    /// The client's options with its cap on `maxAttempts`, which is at least 2 (a call of one
    /// attempt has nothing to cap); a smaller cap is an error naming `field`.
    pub fn with_cap(max_attempts_cap: u32, field: &str) -> Result<ClientOptions, Error> {
        if max_attempts_cap < 2 {
            return Err(out_of_range(field, max_attempts_cap, "an integer of at least 2"));
        }
        Ok(ClientOptions { max_attempts_cap })
    }
}

impl Default for ClientOptions {
    fn default() -> ClientOptions {
        ClientOptions {
            max_attempts_cap: DEFAULT_MAX_ATTEMPTS_CAP,
        }
    }
}

fn missing(field: &str) -> Error {
    Error::MissingField {
        field: field.to_owned(),
    }
}

fn out_of_range(field: &str, value: impl ToString, expected: &str) -> Error {
    Error::OutOfRange {
        field: field.to_owned(),
        value: value.to_string(),
        expected: expected.to_owned(),
    }
}

/// `maxAttempts`: "a JSON integer value greater than 1", capped without error.
fn max_attempts(field: &str, value: Option<f64>, cap: u32) -> Result<u32, Error> {
    let n = value.ok_or_else(|| missing(field))?;
    if !(n.is_finite() && n.fract() == 0.0 && n > 1.0) {
        return Err(out_of_range(
            field,
            crate::units::number_text(n),
            "an integer greater than 1",
        ));
    }
    Ok(if n >= f64::from(cap) { cap } else { n as u32 })
}

/// The longest proto3 duration: 315,576,000,000 s (10,000 years).
const MAX_DURATION_SECONDS: u64 = 315_576_000_000;

const DURATION_EXPECTED: &str =
    "a proto3 JSON duration: seconds with up to 9 decimals and an \"s\", e.g. \"0.1s\"";

/// Reads a proto3 JSON duration (`"1.5s"`, `".1s"`, `"-2s"`) as signed nanoseconds.
pub fn parse_duration(field: &str, text: &str) -> Result<i128, Error> {
    let bad = || out_of_range(field, format!("{text:?}"), DURATION_EXPECTED);
    let body = text.strip_suffix('s').ok_or_else(bad)?;
    let (negative, body) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body),
    };
    let (whole, frac) = match body.split_once('.') {
        Some((w, f)) => (w, f),
        None => (body, ""),
    };
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) || frac.len() > 9 {
        return Err(bad());
    }
    if body.contains('.') && frac.is_empty() {
        return Err(bad());
    }
    let seconds: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| bad())?
    };
    if seconds > MAX_DURATION_SECONDS {
        return Err(bad());
    }
    let nanos: u64 = if frac.is_empty() {
        0
    } else {
        format!("{frac:0<9}").parse().map_err(|_| bad())?
    };
    let total = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    Ok(if negative { -total } else { total })
}

/// Non-negative nanoseconds as a u64: a duration past 2^64 − 1 ns (584 years) reads as that.
fn saturating_ns(ns: i128) -> u64 {
    u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
}

/// A duration that must be greater than 0, in ns.
fn positive_duration(field: &str, value: Option<&String>) -> Result<u64, Error> {
    let text = value.ok_or_else(|| missing(field))?;
    let ns = parse_duration(field, text)?;
    if ns <= 0 {
        return Err(out_of_range(
            field,
            format!("{text:?}"),
            "a duration greater than 0",
        ));
    }
    Ok(saturating_ns(ns))
}

impl RetryPolicyDocument {
    /// The policy, validated as A6 asks, `maxAttempts` capped at `options`' cap.
    pub fn validate(&self, field: &str, options: &ClientOptions) -> Result<RetryPolicy, Error> {
        let at = |name: &str| format!("{field}.{name}");
        let max_attempts = max_attempts(&at("maxAttempts"), self.max_attempts, options.max_attempts_cap)?;
        let initial_backoff_ns = positive_duration(&at("initialBackoff"), self.initial_backoff.as_ref())?;
        let max_backoff_ns = positive_duration(&at("maxBackoff"), self.max_backoff.as_ref())?;
        let multiplier = self
            .backoff_multiplier
            .ok_or_else(|| missing(&at("backoffMultiplier")))?;
        if !(multiplier.is_finite() && multiplier > 0.0) {
            return Err(out_of_range(
                &at("backoffMultiplier"),
                crate::units::number_text(multiplier),
                "a number greater than 0",
            ));
        }
        let codes = self
            .retryable_status_codes
            .ok_or_else(|| missing(&at("retryableStatusCodes")))?;
        if codes.is_empty() {
            return Err(out_of_range(
                &at("retryableStatusCodes"),
                "[]",
                "a non-empty list of status codes",
            ));
        }
        Ok(RetryPolicy {
            max_attempts,
            initial_backoff_ns,
            max_backoff_ns,
            backoff_multiplier: multiplier,
            retryable_status_codes: codes,
        })
    }
}

impl HedgingPolicyDocument {
    /// The policy, validated as A6 asks, `maxAttempts` capped at `options`' cap.
    pub fn validate(&self, field: &str, options: &ClientOptions) -> Result<HedgingPolicy, Error> {
        let at = |name: &str| format!("{field}.{name}");
        let max_attempts = max_attempts(&at("maxAttempts"), self.max_attempts, options.max_attempts_cap)?;
        let hedging_delay_ns = match &self.hedging_delay {
            None => 0,
            Some(text) => {
                let ns = parse_duration(&at("hedgingDelay"), text)?;
                if ns < 0 {
                    return Err(out_of_range(
                        &at("hedgingDelay"),
                        format!("{text:?}"),
                        "a duration of 0 or more",
                    ));
                }
                saturating_ns(ns)
            }
        };
        Ok(HedgingPolicy {
            max_attempts,
            hedging_delay_ns,
            non_fatal_status_codes: self.non_fatal_status_codes.unwrap_or_default(),
        })
    }
}

impl RetryThrottlingDocument {
    /// The core's token bucket for it (A6's ranges, which the bucket's document checks).
    pub fn validate(&self, field: &str) -> Result<BudgetConfig, Error> {
        let max_tokens = self
            .max_tokens
            .ok_or_else(|| missing(&format!("{field}.maxTokens")))?;
        if max_tokens.fract() != 0.0 {
            return Err(out_of_range(
                &format!("{field}.maxTokens"),
                crate::units::number_text(max_tokens),
                "an integer in (0, 1000]",
            ));
        }
        let token_ratio = self
            .token_ratio
            .ok_or_else(|| missing(&format!("{field}.tokenRatio")))?;
        let doc = BudgetDocument {
            version: None,
            kind: BudgetKind::TokenBucket,
            max_tokens: Some(max_tokens),
            token_ratio: Some(token_ratio),
            lenient: None,
            capacity: None,
            retry_cost: None,
            timeout_cost: None,
            throttling_cost: None,
            costs: None,
            no_retry_increment: None,
            percent: None,
            ttl_ms: None,
            min_retries_per_sec: None,
        };
        BudgetConfig::from_document(&doc, field).map_err(|e| {
            let f = e
                .field()
                .replace("max_tokens", "maxTokens")
                .replace("token_ratio", "tokenRatio");
            e.with_field(&f)
        })
    }
}

impl ServiceConfig {
    /// The service config of `doc`, validated; errors name the field (`methodConfig[0].retryPolicy.maxAttempts`).
    pub fn from_document(
        doc: &ServiceConfigDocument,
        options: &ClientOptions,
    ) -> Result<ServiceConfig, Error> {
        let mut methods = Vec::with_capacity(doc.method_config.len());
        let mut seen: Vec<(String, String)> = Vec::new();
        for (i, m) in doc.method_config.iter().enumerate() {
            let field = format!("methodConfig[{i}]");
            let policy = match (&m.retry_policy, &m.hedging_policy) {
                (Some(_), Some(_)) => {
                    return Err(out_of_range(
                        &format!("{field}.hedgingPolicy"),
                        "a hedgingPolicy beside a retryPolicy",
                        "only one of retryPolicy or hedgingPolicy (gRFC A6)",
                    ))
                }
                (Some(r), None) => MethodPolicy::Retry(r.validate(&format!("{field}.retryPolicy"), options)?),
                (None, Some(h)) => {
                    MethodPolicy::Hedging(h.validate(&format!("{field}.hedgingPolicy"), options)?)
                }
                (None, None) => MethodPolicy::None,
            };
            let mut names = Vec::with_capacity(m.name.len());
            for (j, n) in m.name.iter().enumerate() {
                let service = n.service.clone().unwrap_or_default();
                let method = n.method.clone().unwrap_or_default();
                if service.is_empty() && !method.is_empty() {
                    return Err(out_of_range(
                        &format!("{field}.name[{j}].method"),
                        format!("{method:?}"),
                        "no method when the service is empty (the default config names neither)",
                    ));
                }
                let key = (service, method);
                if seen.contains(&key) {
                    return Err(out_of_range(
                        &format!("{field}.name[{j}]"),
                        format!("{}/{}", key.0, key.1),
                        "a name no other method config has",
                    ));
                }
                seen.push(key.clone());
                names.push(key);
            }
            methods.push((names, policy));
        }
        let throttling = doc
            .retry_throttling
            .as_ref()
            .map(|t| t.validate("retryThrottling"))
            .transpose()?;
        Ok(ServiceConfig { methods, throttling })
    }

    /// The policy for `service`/`method`: the method config naming exactly it, else the one naming
    /// the service, else the default config's; [`MethodPolicy::None`] when none matches.
    pub fn policy_for(&self, service: &str, method: &str) -> MethodPolicy {
        self.matched(service, method)
            .map_or(MethodPolicy::None, |(_, p)| p)
    }

    /// Which name matched (`exact`, `service` or `default`) and its policy.
    pub fn matched(&self, service: &str, method: &str) -> Option<(&'static str, MethodPolicy)> {
        let find = |s: &str, m: &str| {
            self.methods
                .iter()
                .find(|(names, _)| names.iter().any(|(ns, nm)| ns == s && nm == m))
                .map(|(_, p)| *p)
        };
        if !service.is_empty() {
            if !method.is_empty() {
                if let Some(p) = find(service, method) {
                    return Some(("exact", p));
                }
            }
            if let Some(p) = find(service, "") {
                return Some(("service", p));
            }
        }
        find("", "").map(|p| ("default", p))
    }

    /// The throttling bucket's configuration, if the config has `retryThrottling`.
    pub fn throttling(&self) -> Option<BudgetConfig> {
        self.throttling
    }
}
