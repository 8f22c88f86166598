//! The core's objects JavaScript holds between calls (budgets, breakers, KV error maps, gRPC's
//! service config and policies, AWS's retry configuration and rate limiter) in one class over the
//! wire crate's JSON interface (`retrypolicy_wire::objects`, as the Node addon holds them):
//! arguments and answers cross as JSON text. Each object sits in a shared cell, so a retry run
//! ([`crate::run`]) holds the same budget or breaker its caller keeps using. wasm-bindgen takes
//! no optional reference: an absent object is the handle [`ObjectHandle::none`].

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use retrypolicy::Error;
use retrypolicy_wire::objects::{self, busy, Object, Reply};
use wasm_bindgen::prelude::*;

use crate::errors::Fallible;

/// One of the core's objects, of the kind it was made as, or none.
#[wasm_bindgen]
pub struct ObjectHandle {
    /// The kind (`budget`, `breaker`, ...), naming it when a call finds it in use.
    kind: &'static str,
    object: Option<Rc<RefCell<Object>>>,
}

impl ObjectHandle {
    /// A handle of `object`.
    fn of(object: Object) -> ObjectHandle {
        ObjectHandle {
            kind: object.kind(),
            object: Some(Rc::new(RefCell::new(object))),
        }
    }

    /// The object's shared cell, for a run that holds it (none for none).
    pub(crate) fn shared(&self) -> Option<Rc<RefCell<Object>>> {
        self.object.clone()
    }

    /// The object borrowed for one call (none for none); one in use by another call (a run's
    /// strategy reaching the run's own budget) is refused naming `field`.
    fn lend(&self, field: &str) -> Result<Option<RefMut<'_, Object>>, Error> {
        let cell = self.object.as_ref();
        cell.map(|c| c.try_borrow_mut().map_err(|_| busy(field)))
            .transpose()
    }
}

#[wasm_bindgen]
impl ObjectHandle {
    /// An object of `kind` from its arguments (JSON text).
    #[wasm_bindgen(constructor)]
    pub fn new(kind: &str, args: &str) -> Fallible<ObjectHandle> {
        Ok(ObjectHandle::of(objects::open(kind, args)?))
    }

    /// No object: `invoke`'s target or loan when there is none.
    pub fn none() -> ObjectHandle {
        ObjectHandle {
            kind: "none",
            object: None,
        }
    }
}

/// Calls `method` on `target` (none: a function whose target is optional) with `args` (JSON
/// text), `lent` the budget lent to the call (or none): the answer as JSON text, or a new object.
#[wasm_bindgen]
pub fn invoke(target: &ObjectHandle, method: &str, args: &str, lent: &ObjectHandle) -> Fallible<JsValue> {
    let mut target = target.lend(target.kind)?;
    let mut lent = lent.lend("throttling")?;
    Ok(
        match objects::invoke(target.as_deref_mut(), method, args, lent.as_deref_mut())? {
            Reply::Json(text) => text.into(),
            Reply::Object(object) => ObjectHandle::of(*object).into(),
        },
    )
}
