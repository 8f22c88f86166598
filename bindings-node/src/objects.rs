//! The core's objects JavaScript holds between calls (budgets, breakers, KV error maps, gRPC's
//! service config and policies, AWS's retry configuration and rate limiter) in one `#[napi]`
//! class over the wire crate's JSON interface (`retrypolicy_wire::objects`, as the wasm module
//! holds them): arguments and answers cross as JSON text, so nothing here converts them.

use std::cell::{RefCell, RefMut};

use napi::bindgen_prelude::{Either, Env};
use napi_derive::napi;
use retrypolicy::run::Guards;
use retrypolicy::Error as CoreError;
use retrypolicy_wire::objects::{self, busy, Object, Reply};

use crate::errors::{run, Res};

/// One of the core's objects, of the kind it was made as.
#[napi]
pub struct ObjectHandle {
    /// The kind (`budget`, `breaker`, ...), naming it when a call finds it in use.
    kind: &'static str,
    pub(crate) object: RefCell<Object>,
}

impl ObjectHandle {
    /// The object borrowed for one call; one in use by another call (a run's strategy reaching
    /// the run's own budget) is refused by name.
    pub(crate) fn lend(&self) -> Result<RefMut<'_, Object>, CoreError> {
        self.lend_as(self.kind)
    }

    /// [`Self::lend`], refused naming `field` (the argument it was passed as).
    fn lend_as(&self, field: &str) -> Result<RefMut<'_, Object>, CoreError> {
        self.object.try_borrow_mut().map_err(|_| busy(field))
    }
}

#[napi]
impl ObjectHandle {
    /// An object of `kind` from its arguments (JSON text).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, kind: String, args: String) -> napi::Result<Self> {
        run(&env, || {
            let object = objects::open(&kind, &args)?;
            Ok(ObjectHandle {
                kind: object.kind(),
                object: RefCell::new(object),
            })
        })
    }
}

/// Calls `method` on `target` (none: a function whose target is optional) with `args` (JSON
/// text), `lent` the budget lent to the call: the answer as JSON text, or a new object.
#[napi(catch_unwind)]
pub fn invoke(
    env: Env,
    target: Option<&ObjectHandle>,
    method: String,
    args: String,
    lent: Option<&ObjectHandle>,
) -> napi::Result<Either<String, ObjectHandle>> {
    run(&env, || {
        let mut target = target.map(ObjectHandle::lend).transpose()?;
        let mut lent = lent.map(|l| l.lend_as("throttling")).transpose()?;
        Ok(
            match objects::invoke(target.as_deref_mut(), &method, &args, lent.as_deref_mut())? {
                Reply::Json(text) => Either::A(text),
                Reply::Object(object) => Either::B(ObjectHandle {
                    kind: object.kind(),
                    object: RefCell::new(*object),
                }),
            },
        )
    })
}

/// The budget and breaker a run's call lends the machine, each borrowed for the call.
pub(crate) struct Lent<'a> {
    budget: Option<RefMut<'a, Object>>,
    breaker: Option<RefMut<'a, Object>>,
}

/// Lends `budget` and `breaker` (handles of those kinds, as the JavaScript layer passes them).
pub(crate) fn lend<'a>(budget: Option<&'a ObjectHandle>, breaker: Option<&'a ObjectHandle>) -> Res<Lent<'a>> {
    Ok(Lent {
        budget: budget.map(ObjectHandle::lend).transpose()?,
        breaker: breaker.map(ObjectHandle::lend).transpose()?,
    })
}

impl Lent<'_> {
    /// The machine's view of them, for one call.
    pub(crate) fn guards(&mut self) -> Guards<'_> {
        Guards {
            budget: self.budget.as_mut().and_then(|o| o.budget_mut()),
            breaker: self.breaker.as_mut().and_then(|o| o.breaker_mut()),
        }
    }
}
