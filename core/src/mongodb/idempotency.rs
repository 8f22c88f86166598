//! The application strategy of seed 000 ("retry network errors once, make operations
//! idempotent"): classify an operation's idempotency from its JSON, decide whether a duplicate
//! key error on an insert's retry means the first attempt worked, rewrite a non-idempotent update
//! into the two-step pending-token form, and (seed 003) flag updates that address array elements
//! by index.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::errors::DUPLICATE_KEY;
use super::{SEED_POSITIONAL_SECTION, SEED_RESILIENT_SECTION};
use crate::error::Error;

/// Update operators and whether applying one twice equals applying it once. Seed 000 names
/// `$set`, `$unset`, `$addToSet` idempotent and `$inc` not; issue 3 adds `$min`, `$max`,
/// `$setOnInsert`, `$pull` (idempotent) and `$mul`, `$push`, `$pop`, `$bit` (not). `$pullAll`
/// and `$rename` (a second application finds nothing to do) are idempotent, `$currentDate`
/// (a second application writes a later time) is not: project decisions (README).
pub const UPDATE_OPERATORS: [(&str, bool); 15] = [
    ("$set", true),
    ("$unset", true),
    ("$addToSet", true),
    ("$min", true),
    ("$max", true),
    ("$setOnInsert", true),
    ("$pull", true),
    ("$pullAll", true),
    ("$rename", true),
    ("$inc", false),
    ("$mul", false),
    ("$push", false),
    ("$pop", false),
    ("$bit", false),
    ("$currentDate", false),
];

/// Whether update operator `op` is idempotent; `None` for an operator not in [`UPDATE_OPERATORS`].
pub fn operator_is_idempotent(op: &str) -> Option<bool> {
    UPDATE_OPERATORS
        .iter()
        .find(|(name, _)| *name == op)
        .map(|(_, i)| *i)
}

/// The application operations seed 000 discusses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AppOperation {
    /// A query.
    Find,
    /// A single-document query.
    FindOne,
    /// Insert one document.
    InsertOne,
    /// Insert several documents.
    InsertMany,
    /// Update one document.
    UpdateOne,
    /// Update every matching document.
    UpdateMany,
    /// Replace one document.
    ReplaceOne,
    /// Delete one document.
    DeleteOne,
    /// Delete every matching document.
    DeleteMany,
}

fn default_unique_fields() -> Vec<String> {
    vec!["_id".to_owned()]
}

/// `null` read as [`default_unique_fields`]'s value, as the key left out is.
fn default_unique_fields_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    crate::serde_form::or_else(d, default_unique_fields)
}

/// An operation as the application would send it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperationDoc {
    /// The operation.
    pub op: AppOperation,
    /// The filter (updates, deletes, finds).
    #[serde(default = "empty_object", deserialize_with = "empty_object_if_null")]
    pub filter: Value,
    /// The update document (operators), an update pipeline (array), or a replacement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<Value>,
    /// The documents of an insert (`insertOne` takes one).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::serde_form::or_default"
    )]
    pub documents: Vec<Value>,
    /// Fields with a unique index; `_id` by default (seed 000 assumes no other unique index).
    #[serde(
        default = "default_unique_fields",
        deserialize_with = "default_unique_fields_if_null"
    )]
    pub unique_fields: Vec<String>,
    /// Upsert.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub upsert: bool,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// `null` read as [`empty_object`]'s value, as the key left out is.
fn empty_object_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    crate::serde_form::or_else(d, empty_object)
}

/// An update path that addresses an array element by index (seed 003) and its safer form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PositionalHazard {
    /// The operator holding the path.
    pub operator: String,
    /// The path, e.g. `images.1.width`.
    pub path: String,
    /// The array, e.g. `images`.
    pub array_path: String,
    /// The index used, e.g. `1`.
    pub index: String,
    /// The path with the positional operator, e.g. `images.$.width`.
    pub suggested_path: String,
    /// The filter field naming the element by its `_id`, e.g. `images._id`.
    pub element_id_field: String,
    /// Another index follows: `$` only reaches one array level (SERVER-831), so nesting remains.
    pub nested: bool,
    /// The source section.
    pub section: &'static str,
}

/// The verdict on one operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IdempotencyReport {
    /// Whether sending it twice has the same effect as sending it once.
    pub idempotent: bool,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// The source section.
    pub section: &'static str,
    /// The operators that make the update non-idempotent, in document order.
    pub non_idempotent_operators: Vec<String>,
    /// An insert with client `_id`s: a duplicate key error on `_id` in the retry means success.
    pub duplicate_key_on_retry_is_success: bool,
    /// Array-index paths in the update (seed 003).
    pub hazards: Vec<PositionalHazard>,
}

fn report(idempotent: bool, rule: &'static str) -> IdempotencyReport {
    IdempotencyReport {
        idempotent,
        rule,
        section: SEED_RESILIENT_SECTION,
        non_idempotent_operators: Vec::new(),
        duplicate_key_on_retry_is_success: false,
        hazards: Vec::new(),
    }
}

pub(super) fn invalid(field: &str, message: &str) -> Error {
    Error::InvalidType {
        field: field.to_owned(),
        message: message.to_owned(),
    }
}

pub(super) fn object<'a>(v: &'a Value, field: &str) -> Result<&'a Map<String, Value>, Error> {
    v.as_object().ok_or_else(|| invalid(field, "expected an object"))
}

/// Whether `filter` holds an equality match on one of `unique_fields` (a value that is not an
/// operator document such as `{"$gt": 1}`).
fn equality_on_unique(filter: &Map<String, Value>, unique_fields: &[String]) -> bool {
    unique_fields.iter().any(|f| match filter.get(f) {
        None => false,
        Some(Value::Object(m)) => !m.keys().any(|k| k.starts_with('$')),
        Some(_) => true,
    })
}

/// The field a token-guarded update (seed 000, step two) guards with: a field whose filter value
/// the update's `$pull` removes, so a second application matches nothing.
pub fn token_guard_field(filter: &Value, update: &Value) -> Option<String> {
    let filter = filter.as_object()?;
    let pull = update.get("$pull")?.as_object()?;
    pull.iter()
        .find(|(field, token)| filter.get(*field) == Some(*token))
        .map(|(field, _)| field.clone())
}

/// What an update document is made of.
pub(super) enum UpdateShape<'a> {
    Operators(&'a Map<String, Value>),
    Replacement,
    Pipeline,
}

pub(super) fn update_shape<'a>(update: &'a Value, field: &str) -> Result<UpdateShape<'a>, Error> {
    match update {
        Value::Array(_) => Ok(UpdateShape::Pipeline),
        Value::Object(m) => {
            let ops = m.keys().filter(|k| k.starts_with('$')).count();
            if ops == 0 {
                Ok(UpdateShape::Replacement)
            } else if ops == m.len() {
                Ok(UpdateShape::Operators(m))
            } else {
                Err(invalid(field, "mixes update operators and plain fields"))
            }
        }
        _ => Err(invalid(field, "expected an update document or pipeline")),
    }
}

/// Array-index paths in an update document (seed 003): every path under an operator with an
/// all-digit segment, with the `$` positional form and the `_id` filter field to use instead,
/// sorted by path.
pub fn positional_hazards(update: &Value) -> Vec<PositionalHazard> {
    let Some(ops) = update.as_object() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (operator, fields) in ops.iter().filter(|(k, _)| k.starts_with('$')) {
        let Some(fields) = fields.as_object() else {
            continue;
        };
        for path in fields.keys() {
            let segments: Vec<&str> = path.split('.').collect();
            let is_index = |s: &&str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            let Some(i) = segments.iter().position(is_index) else {
                continue;
            };
            if i == 0 {
                continue;
            }
            let array_path = segments[..i].join(".");
            let mut suggested = segments.clone();
            suggested[i] = "$";
            out.push(PositionalHazard {
                operator: operator.clone(),
                path: path.clone(),
                array_path: array_path.clone(),
                index: segments[i].to_owned(),
                suggested_path: suggested.join("."),
                element_id_field: format!("{array_path}._id"),
                nested: segments[i + 1..].iter().any(is_index),
                section: SEED_POSITIONAL_SECTION,
            });
        }
    }
    // Sorted, so every language reports the same order whatever its maps preserve.
    out.sort_by(|a, b| (&a.path, &a.operator).cmp(&(&b.path, &b.operator)));
    out
}

/// Classifies `doc`'s idempotency (seed 000): reads are; inserts are when every document has a
/// client `_id`; deleteOne is when it filters by equality on a unique field; deleteMany is; an
/// update is when every operator is idempotent or when it is token-guarded; a replacement is;
/// a pipeline update is not. Also reports seed 003's array-index hazards.
pub fn analyze_idempotency(doc: &OperationDoc) -> Result<IdempotencyReport, Error> {
    let filter = object(&doc.filter, "filter")?;
    match doc.op {
        AppOperation::Find | AppOperation::FindOne => Ok(report(true, "read")),
        AppOperation::InsertOne | AppOperation::InsertMany => {
            if doc.documents.is_empty() {
                return Err(Error::MissingField {
                    field: "documents".to_owned(),
                });
            }
            if doc.op == AppOperation::InsertOne && doc.documents.len() != 1 {
                return Err(Error::OutOfRange {
                    field: "documents".to_owned(),
                    value: doc.documents.len().to_string(),
                    expected: "exactly one document for insertOne".to_owned(),
                });
            }
            for (i, d) in doc.documents.iter().enumerate() {
                object(d, &format!("documents[{i}]"))?;
            }
            if doc.documents.iter().all(|d| d.get("_id").is_some()) {
                let mut r = report(true, "insert_with_client_id");
                r.duplicate_key_on_retry_is_success = true;
                Ok(r)
            } else {
                Ok(report(false, "insert_without_client_id"))
            }
        }
        AppOperation::DeleteMany => Ok(report(true, "delete_many")),
        AppOperation::DeleteOne => {
            if equality_on_unique(filter, &doc.unique_fields) {
                Ok(report(true, "delete_one_by_unique_key"))
            } else {
                Ok(report(false, "delete_one_by_non_unique_filter"))
            }
        }
        AppOperation::UpdateOne | AppOperation::UpdateMany | AppOperation::ReplaceOne => {
            let update = doc.update.as_ref().ok_or_else(|| Error::MissingField {
                field: "update".to_owned(),
            })?;
            let shape = update_shape(update, "update")?;
            let replacement = matches!(shape, UpdateShape::Replacement);
            if doc.op == AppOperation::ReplaceOne && !replacement {
                return Err(invalid("update", "replaceOne takes a replacement document"));
            }
            if doc.op != AppOperation::ReplaceOne && replacement {
                return Err(invalid(
                    "update",
                    "updateOne and updateMany take update operators or a pipeline",
                ));
            }
            let mut r = match shape {
                UpdateShape::Pipeline => report(false, "pipeline_update"),
                UpdateShape::Replacement => report(true, "replacement_document"),
                UpdateShape::Operators(ops) => {
                    let mut bad = Vec::new();
                    for (op, fields) in ops {
                        let idempotent = operator_is_idempotent(op).ok_or_else(|| Error::UnknownName {
                            field: format!("update.{op}"),
                            value: op.clone(),
                            expected: UPDATE_OPERATORS.map(|(n, _)| n).join(", "),
                        })?;
                        object(fields, &format!("update.{op}"))?;
                        if !idempotent {
                            bad.push(op.clone());
                        }
                    }
                    // A guarded retry after the token was pulled matches nothing; with upsert it
                    // would insert a new document instead, so only a non-upsert guard counts.
                    let mut r = if !doc.upsert && token_guard_field(&doc.filter, update).is_some() {
                        report(true, "token_guarded_update")
                    } else if bad.is_empty() {
                        report(true, "idempotent_operators")
                    } else {
                        report(false, "non_idempotent_operator")
                    };
                    r.non_idempotent_operators = bad;
                    r
                }
            };
            r.hazards = positional_hazards(update);
            Ok(r)
        }
    }
}

/// A duplicate key error as the server describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DuplicateKeyError {
    /// The error code (11000 for a duplicate key).
    pub code: i32,
    /// `keyPattern` of the violated index, e.g. `{"_id": 1}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_pattern: Option<Value>,
    /// The index name, e.g. `_id_` (used when `key_pattern` is absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<String>,
    /// `keyValue`, e.g. `{"_id": 7}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_value: Option<Value>,
}

/// Whether a duplicate key error on an insert's retry means the first attempt succeeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DuplicateKeyVerdict {
    /// True: treat the insert as done. False: the error is real.
    pub first_attempt_succeeded: bool,
    /// The stable name of the rule that decided.
    pub rule: &'static str,
    /// The source section.
    pub section: &'static str,
}

/// Seed 000: on the RETRY of an insert with client `_id` `document_id`, a duplicate key error on
/// the `_id` index for that same `_id` means "the first try worked"; one that names another unique
/// index, another `_id`, or an index it cannot identify is a real error.
pub fn duplicate_key_on_retry(document_id: &Value, error: &DuplicateKeyError) -> DuplicateKeyVerdict {
    let v = |ok: bool, rule: &'static str| DuplicateKeyVerdict {
        first_attempt_succeeded: ok,
        rule,
        section: SEED_RESILIENT_SECTION,
    };
    if error.code != DUPLICATE_KEY {
        return v(false, "not_a_duplicate_key_error");
    }
    let on_id_index = match (&error.key_pattern, &error.index) {
        (Some(Value::Object(p)), _) => p.len() == 1 && p.get("_id").and_then(Value::as_i64) == Some(1),
        (Some(_), _) => false,
        (None, Some(name)) => name == "_id_",
        (None, None) => return v(false, "index_not_identified"),
    };
    if !on_id_index {
        return v(false, "other_unique_index");
    }
    match error.key_value.as_ref().and_then(|k| k.get("_id")) {
        Some(id) if id == document_id => v(true, "same_id_already_inserted"),
        Some(_) => v(false, "different_id"),
        None => v(false, "key_value_not_identified"),
    }
}

pub use super::pending_token::{pending_token_rewrite, PendingTokenRewrite, UpdateStep};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn operator_table_names_each_operator_once() {
        for (name, _) in UPDATE_OPERATORS {
            assert_eq!(UPDATE_OPERATORS.iter().filter(|(n, _)| *n == name).count(), 1);
        }
    }

    #[test]
    fn hazard_path_with_two_indexes_is_nested() {
        let h = positional_hazards(&json!({"$set": {"a.0.b.1.c": 1, "x": 2}}));
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].suggested_path, "a.$.b.1.c");
        assert!(h[0].nested);
    }
}
