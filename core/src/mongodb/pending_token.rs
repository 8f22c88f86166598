//! Seed 000's two-step pending-token rewrite of a non-idempotent update.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::idempotency::*;
use super::SEED_RESILIENT_SECTION;
use crate::error::Error;

/// One step of the rewrite: an `updateOne(filter, update, upsert)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UpdateStep {
    /// The filter.
    pub filter: Value,
    /// The update document.
    pub update: Value,
    /// Upsert.
    pub upsert: bool,
}

/// The two-step pending-token form of a non-idempotent update (seed 000).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingTokenRewrite {
    /// Step one: `$addToSet` the token to the pending array (idempotent).
    pub step1: UpdateStep,
    /// Step two: match the token, `$pull` it and apply the original update (token-guarded).
    pub step2: UpdateStep,
    /// For a pure `$inc`, the seed's nightly cleanup pipeline that applies the pending tokens left
    /// by failed step twos; `null` otherwise.
    pub cleanup_pipeline: Option<Value>,
    /// The source section.
    pub section: &'static str,
}

/// Rewrites `updateOne(filter, update, upsert)` into seed 000's two steps, with the caller's
/// unique `token` (e.g. a fresh ObjectId) and the array field `pending_field` (default "pending"):
/// step one `updateOne(filter, {$addToSet: {pending: token}}, upsert)`, step two
/// `updateOne(filter + {pending: token}, update + {$pull: {pending: token}}, upsert=false)`.
/// Each step may then be retried once after a network error.
pub fn pending_token_rewrite(
    filter: &Value,
    update: &Value,
    upsert: bool,
    token: &Value,
    pending_field: &str,
) -> Result<PendingTokenRewrite, Error> {
    let filter_map = object(filter, "filter")?;
    if token.is_null() {
        return Err(invalid("token", "expected a unique value, got null"));
    }
    if pending_field.is_empty() || pending_field.starts_with('$') {
        return Err(Error::OutOfRange {
            field: "pending_field".to_owned(),
            value: pending_field.to_owned(),
            expected: "a field name".to_owned(),
        });
    }
    if filter_map.contains_key(pending_field) {
        return Err(Error::OutOfRange {
            field: "filter".to_owned(),
            value: pending_field.to_owned(),
            expected: "a filter that does not use the pending field".to_owned(),
        });
    }
    let ops = match update_shape(update, "update")? {
        UpdateShape::Operators(ops) => ops,
        _ => return Err(invalid("update", "expected an update document of operators")),
    };
    for (op, fields) in ops {
        operator_is_idempotent(op).ok_or_else(|| Error::UnknownName {
            field: format!("update.{op}"),
            value: op.clone(),
            expected: UPDATE_OPERATORS.map(|(n, _)| n).join(", "),
        })?;
        let fields = object(fields, &format!("update.{op}"))?;
        let touches = |p: &String| p == pending_field || p.starts_with(&format!("{pending_field}."));
        if fields.keys().any(touches) {
            return Err(Error::OutOfRange {
                field: format!("update.{op}"),
                value: pending_field.to_owned(),
                expected: "an update that does not touch the pending field".to_owned(),
            });
        }
    }
    // Step one is the one that may insert the document (step two never upserts), so the fields
    // `$setOnInsert` sets when the document is created go with it.
    let mut guarded_update = ops.clone();
    let mut step1_update = json!({ "$addToSet": { pending_field: token } });
    if let (Some(on_insert), Value::Object(s1)) = (guarded_update.remove("$setOnInsert"), &mut step1_update) {
        s1.insert("$setOnInsert".to_owned(), on_insert);
    }
    let step1 = UpdateStep {
        filter: filter.clone(),
        update: step1_update,
        upsert,
    };
    let mut guarded_filter = filter_map.clone();
    guarded_filter.insert(pending_field.to_owned(), token.clone());
    let pull = guarded_update
        .entry("$pull")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(pull) = pull {
        pull.insert(pending_field.to_owned(), token.clone());
    }
    let cleanup_pipeline = inc_cleanup(ops, pending_field);
    Ok(PendingTokenRewrite {
        step1,
        step2: UpdateStep {
            filter: Value::Object(guarded_filter),
            update: Value::Object(guarded_update),
            upsert: false,
        },
        cleanup_pipeline,
        section: SEED_RESILIENT_SECTION,
    })
}

/// The seed's cleanup for a pure `$inc` update: documents with pending tokens get each counter
/// plus (increment × number of pending tokens).
fn inc_cleanup(ops: &Map<String, Value>, pending_field: &str) -> Option<Value> {
    let inc = ops.get("$inc")?.as_object()?;
    if ops.len() != 1 || inc.values().any(|v| !v.is_number()) {
        return None;
    }
    let size = json!({ "$size": format!("${pending_field}") });
    let mut project = Map::new();
    for (field, by) in inc {
        let added = if by.as_i64() == Some(1) {
            size.clone()
        } else {
            json!({ "$multiply": [by, size] })
        };
        project.insert(field.clone(), json!({ "$add": [format!("${field}"), added] }));
    }
    Some(json!([
        { "$match": { format!("{pending_field}.0"): { "$exists": true } } },
        { "$project": project },
    ]))
}
