//! Requests: the camelCase fields of a JavaScript request → the core's `Request`; the wire form.

use napi::bindgen_prelude::{Env, JsObjectValue, Object, Unknown, ValueType};
use napi_derive::napi;
use retrypolicy::operation::OperationWire;
use retrypolicy::{HttpMethod, Request, Service};

use crate::convert::{self, Js};
use crate::errors::{run, Res};

/// A request's fields as the caller wrote them, before any check: `service`, `operation`,
/// `readonly`, `method`, `timeoutMs`, `elapsedMs`, `attempts`, `idempotent`, `strategy`, `random`,
/// `previousDelayMs`, `previousReasons`.
pub struct Fields<'a>(pub [Js<'a>; 12]);

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
    /// The fields given one by one (the hot `decide` takes them as arguments).
    pub fn new(values: [Unknown<'a>; 12]) -> Fields<'a> {
        Fields(values.map(Js))
    }

    /// Reads the fields of an object (each read costs about 65 ns through N-API).
    pub fn read(v: Unknown<'a>, field: &str) -> Res<Fields<'a>> {
        let js = Js(v);
        if !matches!(js.kind()?, ValueType::Object | ValueType::Function) {
            return Err(js.wrong_type(field, "an object"));
        }
        // SAFETY: the value is an object.
        let obj: Object = unsafe { v.cast() }?;
        let mut values = [v; 12];
        for (slot, name) in values.iter_mut().zip(NAMES) {
            *slot = obj.get_c_named_property_unchecked::<Unknown>(name)?;
        }
        Ok(Fields::new(values))
    }

    /// The core's request; a misplaced or missing operation field is reported by the core's own rule.
    pub fn request(&self) -> Res<Request> {
        let [service, operation, readonly, method, timeout, elapsed, attempts, idempotent, ..] = &self.0;
        let [.., strategy, random, previous_delay, previous_reasons] = &self.0;
        let operation = OperationWire {
            service: convert::opt_name::<Service>(service, "service")?,
            operation: convert::opt_str(operation, "operation", |s| {
                Ok(retrypolicy::KvOperation::parse("operation", s)?)
            })?,
            readonly: convert::opt_bool(readonly, "readonly")?,
            method: convert::opt_name::<HttpMethod>(method, "method")?,
        }
        .into_operation("")?;
        let mut r = Request::new(operation, 0, convert::millis(timeout, "timeoutMs", None)?);
        r.elapsed_ms = convert::millis(elapsed, "elapsedMs", Some(0))?;
        r.attempts = convert::u32_or(attempts, "attempts", Some(0))?;
        r.idempotent = convert::opt_bool(idempotent, "idempotent")?;
        r.strategy = strategy.opt(|v| convert::name(v, "strategy"))?;
        r.random = convert::opt_draw(random, "random")?;
        r.previous_delay_ms = convert::opt_millis(previous_delay, "previousDelayMs")?;
        let items =
            previous_reasons.opt(|v| convert::items(v, "previousReasons", "an array of reason names"))?;
        for (i, item) in items.unwrap_or_default().iter().enumerate() {
            r.previous_reasons
                .push(convert::reason(item, &format!("previousReasons[{i}]"))?);
        }
        Ok(r)
    }
}

/// Reads a request object into the core's request.
pub fn from_object(v: Unknown) -> Res<Request> {
    Fields::read(v, "request")?.request()
}

/// A request in the wire form (snake_case JSON text), checked and written back in its normal form.
#[napi(catch_unwind)]
pub fn request_from_json(env: Env, text: Unknown) -> napi::Result<String> {
    run(&env, || {
        let r: Request =
            convert::with_str(&Js(text), "request", |s| Ok(retrypolicy_wire::from_json_str(s)?))?;
        r.validate()?;
        Ok(serde_json::to_string(&r).map_err(|e| napi::Error::from_reason(e.to_string()))?)
    })
}
