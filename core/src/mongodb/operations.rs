//! Which MongoDB operations retry: retryable writes, retryable reads, their exclusions, and
//! which client option gates overload retries.

use serde::{Deserialize, Serialize};

use super::{
    RR_NOT_ALLOWED_SECTION, RR_SUPPORTED_SECTION, RR_UNSUPPORTED_SECTION, RW_IN_TRANSACTION_SECTION,
    RW_OPTION_SECTION, RW_SUPPORTED_SECTION, RW_UNSUPPORTED_SECTION, TXN_COMMIT_SECTION,
};

/// A driver operation, named as in the CRUD / transactions specifications (camelCase in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OperationName {
    /// `insertOne` (insert).
    InsertOne,
    /// `insertMany` (insert).
    InsertMany,
    /// `updateOne` (update).
    UpdateOne,
    /// `replaceOne` (update).
    ReplaceOne,
    /// `updateMany` (update, multi: true).
    UpdateMany,
    /// `deleteOne` (delete).
    DeleteOne,
    /// `deleteMany` (delete, limit: 0).
    DeleteMany,
    /// `findOneAndDelete` (findAndModify).
    FindOneAndDelete,
    /// `findOneAndReplace` (findAndModify).
    FindOneAndReplace,
    /// `findOneAndUpdate` (findAndModify).
    FindOneAndUpdate,
    /// Collection-level `bulkWrite` (one command per batch).
    BulkWrite,
    /// Client-level `bulkWrite` (the `bulkWrite` command).
    ClientBulkWrite,
    /// `aggregate` (a read unless the pipeline has `$out` / `$merge`).
    Aggregate,
    /// `find`, including the finds behind GridFS.
    Find,
    /// `findOne`.
    FindOne,
    /// `distinct`.
    Distinct,
    /// `count`.
    Count,
    /// `estimatedDocumentCount`.
    EstimatedDocumentCount,
    /// `countDocuments`.
    CountDocuments,
    /// `watch` on a collection, database or client (an aggregate).
    Watch,
    /// `listDatabases`.
    ListDatabases,
    /// `listDatabaseNames`.
    ListDatabaseNames,
    /// `listCollections`.
    ListCollections,
    /// `listCollectionNames`.
    ListCollectionNames,
    /// `listIndexes`.
    ListIndexes,
    /// `listIndexNames`.
    ListIndexNames,
    /// `mapReduce`: never retried by retryable reads.
    MapReduce,
    /// `Cursor.getMore()`: never retried by retryable reads.
    GetMore,
    /// The generic `runCommand` helper: never retried by retryable reads or writes.
    RunCommand,
    /// `commitTransaction`: a retryable write regardless of retryWrites.
    CommitTransaction,
    /// `abortTransaction`: a retryable write regardless of retryWrites.
    AbortTransaction,
    /// `createIndexes`: a write command that is not a retryable write.
    CreateIndexes,
    /// `dropIndexes`: a write command that is not a retryable write.
    DropIndexes,
    /// `create` (collection): a write command that is not a retryable write.
    Create,
    /// `drop` (collection): a write command that is not a retryable write.
    Drop,
}

/// Reads, writes and the generic command runner: which client option gates a retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandClass {
    /// A read: retryReads gates retries.
    Read,
    /// A write: retryWrites gates retries.
    Write,
    /// `runCommand`: overload retries need both retryReads and retryWrites.
    Command,
}

/// How an operation is retried, as a row of the operation table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// On the retryable-writes list (`retryable-writes.md`, Supported Write Operations).
    RetryableWrite,
    /// On the retryable-reads list (`retryable-reads.md`, Supported Read Operations).
    RetryableRead,
    /// A write that is never a retryable write (updateMany, deleteMany, DDL commands).
    UnsupportedWrite,
    /// A read that is never retried (mapReduce, getMore).
    UnsupportedRead,
    /// The generic command runner.
    Command,
    /// commitTransaction / abortTransaction.
    TransactionCommand,
}

/// The operation table: each operation once, with how the specs treat it. Sources:
/// `retryable-writes.md` "Supported / Unsupported Write Operations", `retryable-reads.md`
/// "Supported / Unsupported Read Operations", `transactions.md` "commitTransaction" / "abortTransaction",
/// `client-backpressure.md` "Overload retry policy" (DDL commands and runCommand).
pub const OPERATIONS: [(OperationName, Support); 35] = {
    use OperationName as O;
    use Support as S;
    [
        (O::InsertOne, S::RetryableWrite),
        (O::InsertMany, S::RetryableWrite),
        (O::UpdateOne, S::RetryableWrite),
        (O::ReplaceOne, S::RetryableWrite),
        (O::UpdateMany, S::UnsupportedWrite),
        (O::DeleteOne, S::RetryableWrite),
        (O::DeleteMany, S::UnsupportedWrite),
        (O::FindOneAndDelete, S::RetryableWrite),
        (O::FindOneAndReplace, S::RetryableWrite),
        (O::FindOneAndUpdate, S::RetryableWrite),
        (O::BulkWrite, S::RetryableWrite),
        (O::ClientBulkWrite, S::RetryableWrite),
        (O::Aggregate, S::RetryableRead),
        (O::Find, S::RetryableRead),
        (O::FindOne, S::RetryableRead),
        (O::Distinct, S::RetryableRead),
        (O::Count, S::RetryableRead),
        (O::EstimatedDocumentCount, S::RetryableRead),
        (O::CountDocuments, S::RetryableRead),
        (O::Watch, S::RetryableRead),
        (O::ListDatabases, S::RetryableRead),
        (O::ListDatabaseNames, S::RetryableRead),
        (O::ListCollections, S::RetryableRead),
        (O::ListCollectionNames, S::RetryableRead),
        (O::ListIndexes, S::RetryableRead),
        (O::ListIndexNames, S::RetryableRead),
        (O::MapReduce, S::UnsupportedRead),
        (O::GetMore, S::UnsupportedRead),
        (O::RunCommand, S::Command),
        (O::CommitTransaction, S::TransactionCommand),
        (O::AbortTransaction, S::TransactionCommand),
        (O::CreateIndexes, S::UnsupportedWrite),
        (O::DropIndexes, S::UnsupportedWrite),
        (O::Create, S::UnsupportedWrite),
        (O::Drop, S::UnsupportedWrite),
    ]
};

impl OperationName {
    /// This operation's row in [`OPERATIONS`].
    pub fn support(self) -> Support {
        OPERATIONS
            .iter()
            .find(|(o, _)| *o == self)
            .map(|(_, s)| *s)
            .unwrap_or(Support::Command)
    }

    /// The operation's name as the specs spell it.
    pub fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

/// One operation with the facts that decide its retryability.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MongoOperation {
    /// The driver operation.
    pub name: OperationName,
    /// A bulk write batch holding an updateMany or deleteMany (a `multi: true` statement).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub multi: bool,
    /// Unacknowledged write concern (`w: 0`).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub unacknowledged: bool,
    /// An aggregate pipeline with a write stage (`$out` or `$merge`).
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub write_stage: bool,
    /// Run inside a transaction.
    #[serde(default, deserialize_with = "crate::serde_form::or_default")]
    pub in_transaction: bool,
}

impl MongoOperation {
    /// A plain operation outside a transaction.
    pub fn new(name: OperationName) -> MongoOperation {
        MongoOperation {
            name,
            multi: false,
            unacknowledged: false,
            write_stage: false,
            in_transaction: false,
        }
    }

    /// Read, write or generic command, for the client option that gates retries.
    pub fn class(&self) -> CommandClass {
        match self.name.support() {
            Support::RetryableRead | Support::UnsupportedRead if !self.write_stage => CommandClass::Read,
            Support::RetryableRead | Support::UnsupportedRead => CommandClass::Write,
            Support::Command => CommandClass::Command,
            Support::RetryableWrite | Support::UnsupportedWrite | Support::TransactionCommand => {
                CommandClass::Write
            }
        }
    }
}

/// How an operation may be retried under the client's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Eligibility {
    /// Read, write or generic command.
    pub class: CommandClass,
    /// A retryable write: the command carries a transaction ID and is retried on RetryableWriteError.
    pub retryable_write: bool,
    /// A retryable read: retried on a network error or a code on the read list.
    pub retryable_read: bool,
    /// Retryable overload errors may be retried (client-backpressure rule 2.4: the option is on).
    pub overload_retry: bool,
    /// The stable name of the rule that decided the retryable-write / retryable-read answer.
    pub rule: &'static str,
    /// The spec section the rule comes from.
    pub section: &'static str,
}

/// Decides how `op` may be retried with the client options `retry_writes` and `retry_reads`.
pub fn eligibility(op: &MongoOperation, retry_writes: bool, retry_reads: bool) -> Eligibility {
    let class = op.class();
    let overload_retry = match class {
        _ if op.name.support() == Support::TransactionCommand => true,
        CommandClass::Read => retry_reads,
        CommandClass::Write => retry_writes,
        CommandClass::Command => retry_reads && retry_writes,
    };
    let e = |retryable_write: bool, retryable_read: bool, rule: &'static str, section: &'static str| {
        Eligibility {
            class,
            retryable_write,
            retryable_read,
            overload_retry,
            rule,
            section,
        }
    };
    let support = op.name.support();
    if support == Support::TransactionCommand {
        return e(
            true,
            false,
            "transaction_command_always_retryable",
            TXN_COMMIT_SECTION,
        );
    }
    if op.in_transaction {
        return match class {
            CommandClass::Read => e(false, false, "read_in_transaction", RR_NOT_ALLOWED_SECTION),
            _ => e(false, false, "write_in_transaction", RW_IN_TRANSACTION_SECTION),
        };
    }
    match support {
        Support::TransactionCommand => unreachable!("handled above"),
        Support::Command => e(false, false, "run_command_not_retried", RR_UNSUPPORTED_SECTION),
        Support::UnsupportedRead => e(false, false, "unsupported_read_operation", RR_UNSUPPORTED_SECTION),
        Support::RetryableRead if op.write_stage => {
            e(false, false, "aggregate_with_write_stage", RW_UNSUPPORTED_SECTION)
        }
        Support::RetryableRead if !retry_reads => {
            e(false, false, "retry_reads_disabled", RR_NOT_ALLOWED_SECTION)
        }
        Support::RetryableRead => e(false, true, "supported_read_operation", RR_SUPPORTED_SECTION),
        Support::UnsupportedWrite => {
            let rule = if matches!(op.name, OperationName::UpdateMany | OperationName::DeleteMany) {
                "multi_document_write"
            } else {
                "unsupported_write_command"
            };
            e(false, false, rule, RW_UNSUPPORTED_SECTION)
        }
        Support::RetryableWrite if !retry_writes => {
            e(false, false, "retry_writes_disabled", RW_OPTION_SECTION)
        }
        Support::RetryableWrite if op.unacknowledged => {
            e(false, false, "unacknowledged_write", RW_UNSUPPORTED_SECTION)
        }
        Support::RetryableWrite if op.multi => {
            e(false, false, "multi_document_write", RW_UNSUPPORTED_SECTION)
        }
        Support::RetryableWrite => e(true, false, "supported_write_operation", RW_SUPPORTED_SECTION),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_has_exactly_one_row() {
        for (i, (a, _)) in OPERATIONS.iter().enumerate() {
            assert_eq!(OPERATIONS.iter().filter(|(b, _)| b == a).count(), 1, "row {i}");
        }
    }

    #[test]
    fn run_command_needs_both_options_for_overload_retries() {
        let op = MongoOperation::new(OperationName::RunCommand);
        assert!(eligibility(&op, true, true).overload_retry);
        assert!(!eligibility(&op, true, false).overload_retry);
        assert!(!eligibility(&op, false, true).overload_retry);
    }
}
