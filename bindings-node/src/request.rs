//! Requests: the camelCase fields of a JavaScript request → the core's `Request`, and back.

use napi::bindgen_prelude::{BigInt, Either, Env, JsObjectValue, Object, Unknown, ValueType};
use napi_derive::napi;
use retrypolicy::operation::OperationWire;
use retrypolicy::{HttpMethod, Request, Service};

use crate::convert::{self, kind, wrong_type};
use crate::errors::{run, Res};

/// A request's fields as the caller wrote them, before any check.
pub struct Fields<'a> {
    /// `service`, `operation`, `readonly`, `method`: the operation.
    pub operation: [Unknown<'a>; 4],
    /// `timeoutMs`, `elapsedMs`, `attempts`.
    pub timing: [Unknown<'a>; 3],
    /// `idempotent`, `strategy`, `random`, `previousDelayMs`, `previousReasons`.
    pub optional: [Unknown<'a>; 5],
}

const NAMES: [&std::ffi::CStr; 12] = [
    c"service",
    c"operation",
    c"readonly",
    c"method",
    c"timeoutMs",
    c"elapsedMs",
    c"attempts",
    c"idempotent",
    c"strategy",
    c"random",
    c"previousDelayMs",
    c"previousReasons",
];

impl<'a> Fields<'a> {
    /// Reads the fields of a request object (each read costs about 65 ns through N-API, so the hot
    /// `decide` takes them as arguments instead).
    pub fn read(v: &Unknown<'a>, field: &str) -> Res<Fields<'a>> {
        if !matches!(kind(v)?, ValueType::Object | ValueType::Function) {
            return Err(wrong_type(v, field, "an object"));
        }
        // SAFETY: the value is an object.
        let obj: Object = unsafe { v.cast() }?;
        let mut f = Vec::with_capacity(NAMES.len());
        for name in NAMES {
            f.push(obj.get_c_named_property_unchecked::<Unknown>(name)?);
        }
        Ok(Fields {
            operation: [f[0], f[1], f[2], f[3]],
            timing: [f[4], f[5], f[6]],
            optional: [f[7], f[8], f[9], f[10], f[11]],
        })
    }

    /// The operation: a misplaced or missing field is reported by the core's own rule.
    pub fn operation(&self) -> Res<retrypolicy::Operation> {
        let [service, operation, readonly, method] = &self.operation;
        let present = |v: &Unknown| -> Res<bool> { Ok(kind(v)? != ValueType::Undefined) };
        let wire = OperationWire {
            service: if present(service)? {
                Some(convert::name::<Service>(service, "service")?)
            } else {
                None
            },
            operation: match present(operation)? {
                true => Some(convert::with_str(operation, "operation", |s| {
                    Ok(retrypolicy::KvOperation::parse("operation", s)?)
                })?),
                false => None,
            },
            readonly: if present(readonly)? {
                convert::opt_bool(readonly, "readonly")?
            } else {
                None
            },
            method: if present(method)? {
                Some(convert::name::<HttpMethod>(method, "method")?)
            } else {
                None
            },
        };
        Ok(wire.into_operation("")?)
    }

    /// The core's request.
    pub fn request(&self) -> Res<Request> {
        let [timeout, elapsed, attempts] = &self.timing;
        let [idempotent, strategy, random, previous_delay, previous_reasons] = &self.optional;
        let mut r = Request::new(self.operation()?, 0, convert::millis(timeout, "timeoutMs")?);
        if kind(elapsed)? != ValueType::Undefined {
            r.elapsed_ms = convert::millis(elapsed, "elapsedMs")?;
        }
        r.attempts = convert::count(attempts, "attempts")?;
        r.idempotent = convert::opt_bool(idempotent, "idempotent")?;
        if !convert::is_nullish(strategy)? {
            r.strategy = Some(convert::name(strategy, "strategy")?);
        }
        r.random = convert::opt_draw(random, "random")?;
        r.previous_delay_ms = convert::opt_millis(previous_delay, "previousDelayMs")?;
        if !convert::is_nullish(previous_reasons)? {
            let items = convert::items(previous_reasons, "previousReasons", "an array of reason names")?;
            for (i, item) in items.iter().enumerate() {
                r.previous_reasons
                    .push(convert::reason(item, &format!("previousReasons[{i}]"))?);
            }
        }
        Ok(r)
    }
}

/// Reads a request object into the core's request.
pub fn from_object(v: &Unknown) -> Res<Request> {
    Fields::read(v, "request")?.request()
}

/// A request as the package's camelCase object (what `requestFromJson` returns).
#[napi(object, object_from_js = false)]
pub struct RequestObject {
    /// The service.
    pub service: String,
    /// The KV operation (KV only).
    pub operation: Option<&'static str>,
    /// The readonly property (query and analytics only).
    pub readonly: Option<bool>,
    /// The HTTP method (cluster manager and management only).
    pub method: Option<String>,
    /// Retries already made.
    pub attempts: u32,
    /// Time since the request started.
    pub elapsed_ms: Either<f64, BigInt>,
    /// The request's timeout.
    pub timeout_ms: Either<f64, BigInt>,
    /// The idempotency override.
    pub idempotent: Option<bool>,
    /// The per-request built-in strategy.
    pub strategy: Option<String>,
    /// The random draw.
    pub random: Option<f64>,
    /// The previous retry's delay.
    pub previous_delay_ms: Option<Either<f64, BigInt>>,
    /// Reasons of earlier retries.
    pub previous_reasons: Option<Vec<&'static str>>,
}

impl From<&Request> for RequestObject {
    fn from(r: &Request) -> Self {
        let op = OperationWire::from(r.operation);
        RequestObject {
            service: op.service.map(|s| convert::wire_name(&s)).unwrap_or_default(),
            operation: op.operation.map(|k| k.name()),
            readonly: op.readonly,
            method: op.method.map(|m| convert::wire_name(&m)),
            attempts: r.attempts,
            elapsed_ms: convert::millis_out(r.elapsed_ms),
            timeout_ms: convert::millis_out(r.timeout_ms),
            idempotent: r.idempotent,
            strategy: r.strategy.map(|s| convert::wire_name(&s)),
            random: r.random,
            previous_delay_ms: r.previous_delay_ms.map(convert::millis_out),
            previous_reasons: (!r.previous_reasons.is_empty())
                .then(|| r.previous_reasons.iter().map(|x| x.name()).collect()),
        }
    }
}

/// A request from the wire form (snake_case JSON text), as the package's camelCase object.
#[napi]
pub fn request_from_json(env: Env, text: Unknown) -> napi::Result<RequestObject> {
    run(&env, || {
        let text = convert::with_str(&text, "request", |s| Ok(s.to_owned()))?;
        let r: Request = retrypolicy_wire::from_json_str(&text)?;
        r.validate()?;
        Ok(RequestObject::from(&r))
    })
}

/// A camelCase request in the wire form, as JSON text.
#[napi]
pub fn request_to_json(env: Env, request: Unknown) -> napi::Result<String> {
    run(&env, || {
        let r = from_object(&request)?;
        Ok(serde_json::to_string(&r).map_err(|e| napi::Error::from_reason(e.to_string()))?)
    })
}

/// Whether RFC 0049's idempotent-operation list calls the operation idempotent.
#[napi]
pub fn is_idempotent(env: Env, operation: Unknown) -> napi::Result<bool> {
    run(&env, || {
        Ok(Fields::read(&operation, "operation")?
            .operation()?
            .is_idempotent())
    })
}
