//! `Operation`: what is being retried (a service plus what idempotency depends on).

use pyo3::prelude::*;
use retrypolicy as core;

use crate::convert::{from_json, name, name_of, to_json};

/// What is being retried: a service plus what idempotency depends on.
#[pyclass(frozen, eq, hash, module = "retrypolicy._lowlevel")]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Operation {
    /// The core operation.
    pub inner: core::Operation,
}

impl From<core::Operation> for Operation {
    fn from(inner: core::Operation) -> Self {
        Operation { inner }
    }
}

#[pymethods]
impl Operation {
    /// A KV operation by its snake_case name (`"get"`, `"upsert"`, ...).
    #[staticmethod]
    fn kv(operation: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(core::Operation::Kv(name("operation", operation)?).into())
    }
    /// A query; idempotent only when `readonly`.
    #[staticmethod]
    #[pyo3(signature = (readonly = false))]
    fn query(readonly: bool) -> Self {
        core::Operation::Query { readonly }.into()
    }
    /// An analytics query; idempotent only when `readonly`.
    #[staticmethod]
    #[pyo3(signature = (readonly = false))]
    fn analytics(readonly: bool) -> Self {
        core::Operation::Analytics { readonly }.into()
    }
    /// A search request (always idempotent).
    #[staticmethod]
    fn search() -> Self {
        core::Operation::Search.into()
    }
    /// A views request (always idempotent).
    #[staticmethod]
    fn views() -> Self {
        core::Operation::Views.into()
    }
    /// A cluster manager call with its HTTP method (idempotent iff GET).
    #[staticmethod]
    fn cluster_manager(method: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(core::Operation::ClusterManager(name("method", method)?).into())
    }
    /// A management API call with its HTTP method (idempotent iff GET).
    #[staticmethod]
    fn management(method: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(core::Operation::Management(name("method", method)?).into())
    }
    /// Parses the JSON form (`{"service": "kv", "operation": "get"}`).
    #[staticmethod]
    fn from_json(text: &Bound<'_, PyAny>) -> PyResult<Self> {
        from_json::<core::Operation>(&crate::convert::text("json", text)?).map(Self::from)
    }
    /// The JSON form.
    fn to_json(&self) -> String {
        to_json(&self.inner)
    }
    /// The service name.
    #[getter]
    fn service(&self) -> String {
        name_of(&self.inner.service())
    }
    /// Whether RFC 0049's idempotent list calls it idempotent.
    #[getter]
    fn idempotent(&self) -> bool {
        self.inner.is_idempotent()
    }
    /// `Operation(<JSON form>)`.
    fn __repr__(&self) -> String {
        format!("Operation({})", self.to_json())
    }
}
