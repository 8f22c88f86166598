//! Services, operations and the RFC 0049 idempotent-operation list.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// RFC 0049 section cited by every idempotency answer.
pub const IDEMPOTENT_LIST_SECTION: &str = "RFC 0049, Idempotent Operation List";

/// A Couchbase service an operation is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Service {
    /// Key-value (memcached binary protocol).
    Kv,
    /// N1QL / SQL++ query.
    Query,
    /// Analytics.
    Analytics,
    /// Full-text search.
    Search,
    /// Map-reduce views.
    Views,
    /// The cluster manager REST API (config requests and the like).
    ClusterManager,
    /// The management APIs (bucket, user, index management ...).
    Management,
}

/// Every KV operation the catalog knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KvOperation {
    /// Get a document.
    Get,
    /// Get and lock (pessimistic lock).
    GetAndLock,
    /// Get and touch (reads and updates expiry).
    GetAndTouch,
    /// Replica get request.
    GetReplica,
    /// Sub-document lookup.
    LookupIn,
    /// Exists (GetMeta).
    Exists,
    /// No-op.
    Noop,
    /// Observe via CAS.
    ObserveCas,
    /// Observe via sequence number.
    ObserveSeqno,
    /// Get collection ID.
    GetCollectionId,
    /// Get collection manifest.
    GetCollectionManifest,
    /// Carrier config request (GET_CLUSTER_CONFIG).
    CarrierConfig,
    /// Global config request.
    GlobalConfig,
    /// Insert.
    Insert,
    /// Upsert.
    Upsert,
    /// Replace.
    Replace,
    /// Remove.
    Remove,
    /// Append.
    Append,
    /// Prepend.
    Prepend,
    /// Increment a counter.
    Increment,
    /// Decrement a counter.
    Decrement,
    /// Touch (update expiry).
    Touch,
    /// Unlock a locked document.
    Unlock,
    /// Sub-document mutation.
    MutateIn,
}

/// One row of the KV operation catalog: its wire name and whether RFC 0049 lists it idempotent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KvCatalogRow {
    /// The operation.
    pub operation: KvOperation,
    /// Its snake_case name, as used in JSON.
    pub name: &'static str,
    /// Whether the RFC's idempotent list names it.
    pub idempotent: bool,
}

const fn kv(operation: KvOperation, name: &'static str, idempotent: bool) -> KvCatalogRow {
    KvCatalogRow {
        operation,
        name,
        idempotent,
    }
}

/// RFC 0049, "Idempotent Operation List", KV part. Anything the list does not name is
/// non-idempotent: so `exists` (GetMeta) is, though it only reads; a host that knows better
/// sets `idempotent` on the request.
pub const KV_CATALOG: [KvCatalogRow; 24] = {
    use KvOperation::*;
    [
        kv(Get, "get", true),
        kv(GetAndLock, "get_and_lock", false),   // "NOT get and lock"
        kv(GetAndTouch, "get_and_touch", false), // "NOT get and touch"
        kv(GetReplica, "get_replica", true),
        kv(LookupIn, "lookup_in", true),
        kv(Exists, "exists", false),
        kv(Noop, "noop", true),
        kv(ObserveCas, "observe_cas", true),
        kv(ObserveSeqno, "observe_seqno", true),
        kv(GetCollectionId, "get_collection_id", true),
        kv(GetCollectionManifest, "get_collection_manifest", true),
        kv(CarrierConfig, "carrier_config", true),
        kv(GlobalConfig, "global_config", true),
        kv(Insert, "insert", false),
        kv(Upsert, "upsert", false),
        kv(Replace, "replace", false),
        kv(Remove, "remove", false),
        kv(Append, "append", false),
        kv(Prepend, "prepend", false),
        kv(Increment, "increment", false),
        kv(Decrement, "decrement", false),
        kv(Touch, "touch", false),
        kv(Unlock, "unlock", false),
        kv(MutateIn, "mutate_in", false),
    ]
};

impl KvOperation {
    /// This operation's catalog row.
    #[inline]
    pub fn row(self) -> &'static KvCatalogRow {
        // The catalog is in declaration order, so the discriminant is the row index.
        &KV_CATALOG[self as usize]
    }

    /// The snake_case name used in JSON.
    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// Parses a snake_case KV operation name; `field` names the input in errors.
    pub fn parse(field: &str, value: &str) -> Result<KvOperation, Error> {
        KV_CATALOG
            .iter()
            .find(|r| r.name == value)
            .map(|r| r.operation)
            .ok_or_else(|| Error::UnknownName {
                field: field.to_owned(),
                value: crate::error::shorten(value),
                expected: KV_CATALOG.iter().map(|r| r.name).collect::<Vec<_>>().join(", "),
            })
    }
}

/// HTTP methods, for the cluster manager and management APIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    /// GET: the only method RFC 0049 calls idempotent.
    Get,
    /// HEAD.
    Head,
    /// POST.
    Post,
    /// PUT.
    Put,
    /// DELETE.
    Delete,
    /// PATCH.
    Patch,
    /// OPTIONS.
    Options,
}

/// What is being retried: a service plus what the idempotency rule needs to know about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "OperationWire", into = "OperationWire")]
pub enum Operation {
    /// A KV operation.
    Kv(KvOperation),
    /// A query; idempotent only when `readonly`.
    Query {
        /// The query's `readonly` property.
        readonly: bool,
    },
    /// An analytics query; idempotent only when `readonly`.
    Analytics {
        /// The query's `readonly` property.
        readonly: bool,
    },
    /// A search request: always idempotent.
    Search,
    /// A views request: always idempotent.
    Views,
    /// A cluster manager call: idempotent iff GET.
    ClusterManager(HttpMethod),
    /// A management API call: idempotent iff GET.
    Management(HttpMethod),
}

impl Operation {
    /// The service this operation goes to.
    pub fn service(&self) -> Service {
        match self {
            Operation::Kv(_) => Service::Kv,
            Operation::Query { .. } => Service::Query,
            Operation::Analytics { .. } => Service::Analytics,
            Operation::Search => Service::Search,
            Operation::Views => Service::Views,
            Operation::ClusterManager(_) => Service::ClusterManager,
            Operation::Management(_) => Service::Management,
        }
    }

    /// Whether RFC 0049's idempotent-operation list calls this operation idempotent.
    #[inline]
    pub fn is_idempotent(&self) -> bool {
        match self {
            Operation::Kv(op) => op.row().idempotent,
            Operation::Query { readonly } | Operation::Analytics { readonly } => *readonly,
            Operation::Search | Operation::Views => true,
            Operation::ClusterManager(m) | Operation::Management(m) => *m == HttpMethod::Get,
        }
    }
}

/// The flat JSON form of an operation: `{"service": "kv", "operation": "upsert"}`,
/// `{"service": "query", "readonly": true}`, `{"service": "management", "method": "GET"}`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationWire {
    /// The service.
    pub service: Option<Service>,
    /// The KV operation name (KV only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation: Option<KvOperation>,
    /// The readonly property (query and analytics only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub readonly: Option<bool>,
    /// The HTTP method (cluster manager and management only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<HttpMethod>,
}

impl OperationWire {
    /// Builds the typed operation, naming the missing or misplaced field in the error.
    pub fn into_operation(self, path: &str) -> Result<Operation, Error> {
        let field = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        let service = self.service.ok_or_else(|| Error::MissingField {
            field: field("service"),
        })?;
        let misplaced = |name: &str| Error::UnknownField { field: field(name) };
        let op = match service {
            Service::Kv => Operation::Kv(self.operation.ok_or_else(|| Error::MissingField {
                field: field("operation"),
            })?),
            Service::Query => Operation::Query {
                readonly: self.readonly.unwrap_or(false),
            },
            Service::Analytics => Operation::Analytics {
                readonly: self.readonly.unwrap_or(false),
            },
            Service::Search => Operation::Search,
            Service::Views => Operation::Views,
            Service::ClusterManager | Service::Management => {
                let m = self.method.ok_or_else(|| Error::MissingField {
                    field: field("method"),
                })?;
                if service == Service::ClusterManager {
                    Operation::ClusterManager(m)
                } else {
                    Operation::Management(m)
                }
            }
        };
        if self.operation.is_some() && service != Service::Kv {
            return Err(misplaced("operation"));
        }
        if self.readonly.is_some() && !matches!(service, Service::Query | Service::Analytics) {
            return Err(misplaced("readonly"));
        }
        if self.method.is_some() && !matches!(service, Service::ClusterManager | Service::Management) {
            return Err(misplaced("method"));
        }
        Ok(op)
    }
}

impl TryFrom<OperationWire> for Operation {
    type Error = serde::de::value::Error;
    fn try_from(w: OperationWire) -> Result<Self, Self::Error> {
        w.into_operation("")
            .map_err(|e| crate::serde_form::Rejection::from_error(&e))
    }
}

impl From<Operation> for OperationWire {
    fn from(op: Operation) -> Self {
        let mut w = OperationWire {
            service: Some(op.service()),
            ..Default::default()
        };
        match op {
            Operation::Kv(k) => w.operation = Some(k),
            Operation::Query { readonly } | Operation::Analytics { readonly } => w.readonly = Some(readonly),
            Operation::ClusterManager(m) | Operation::Management(m) => w.method = Some(m),
            Operation::Search | Operation::Views => {}
        }
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_follows_declaration_order_and_names_parse() {
        for (i, r) in KV_CATALOG.iter().enumerate() {
            assert_eq!(r.operation as usize, i, "{} out of order", r.name);
            assert_eq!(KvOperation::parse("operation", r.name).unwrap(), r.operation);
            let json = serde_json::to_string(&r.operation).unwrap();
            assert_eq!(json, format!("\"{}\"", r.name));
        }
    }
}
