// Type definitions of `mongodb`, the MongoDB retry rules (re-exported by ./retrypolicy.d.ts).
// Inputs and outputs are camelCase (the core's snake_case wire form is converted inside); the
// caller's own documents (filters, updates, documents, `_id` values, index keys, the token) pass
// as they are, keys untouched. Outputs are frozen, but for those documents. Values such as
// `'in_progress'` or `'retry_transaction'` are names, not keys: they stay as the spec writes them.

import type { MillisInput } from './retrypolicy.js'
import type { RunnerOptions } from './retry-runners.js'

/** A document of the caller's (filter, update, inserted document, `_id` value): passed as it is. */
export type MongoDocument = { [key: string]: unknown }

/** How a MongoDB command failed: a server reply, or a failure the driver saw itself. */
export type MongoFailureKind = 'server' | 'network' | 'pool_cleared' | 'server_selection' | 'handshake'

/** The server generation that decides which codes mean a retryable write (pre-4.4 servers have no label). */
export type MongoServerKind = 'modern' | 'legacy_mongod' | 'legacy_mongos'

/** A MongoDB error as the driver saw it. */
export interface MongoError {
  /** Default `'server'`. */
  kind?: MongoFailureKind
  code?: number
  /** The error labels, e.g. `RetryableWriteError`, `TransientTransactionError`. */
  labels?: readonly string[]
  /** The code of a `writeConcernError` in the reply. */
  writeConcernCode?: number
  /** The codes of the reply's `writeErrors`. */
  writeErrorCodes?: readonly number[]
  /** The server's backoff hint for an overload error. */
  baseBackoffMs?: MillisInput
  message?: string
}

/** A MongoDB error as an action reports it (`raise`'s `error`, `raise_timeout`'s `cause`). */
export interface MongoErrorRecord {
  readonly kind: MongoFailureKind
  readonly code?: number
  readonly labels: readonly string[]
  readonly writeConcernCode?: number
  readonly writeErrorCodes?: readonly number[]
  readonly baseBackoffMs?: number
  readonly message?: string
}

/** A rule's verdict: the rule's name and the spec section behind it. */
export interface MongoRuled {
  readonly rule: string
  readonly section: string
}

/** `mongodb.classifyError`: the error's class, and its code's row in the spec's table (null when not listed). */
export interface MongoErrorClassification {
  readonly class: 'network' | 'state_change' | 'command' | 'client'
  readonly codeName: string | null
  readonly group: 'state_change' | 'routing' | 'other' | null
  readonly retryableWriteCode: boolean
  readonly retryableReadCode: boolean
  /** The message that replaces error 20 "Transaction numbers ..." (retryable writes unsupported); else null. */
  readonly unsupportedDeploymentMessage: string | null
}

/** The driver's operations by their camelCase API names. */
export type MongoOperationName =
  | 'insertOne' | 'insertMany' | 'updateOne' | 'replaceOne' | 'updateMany' | 'deleteOne' | 'deleteMany'
  | 'findOneAndDelete' | 'findOneAndReplace' | 'findOneAndUpdate' | 'bulkWrite' | 'clientBulkWrite'
  | 'aggregate' | 'find' | 'findOne' | 'distinct' | 'count' | 'estimatedDocumentCount' | 'countDocuments'
  | 'watch' | 'listDatabases' | 'listDatabaseNames' | 'listCollections' | 'listCollectionNames'
  | 'listIndexes' | 'listIndexNames' | 'mapReduce' | 'getMore' | 'runCommand' | 'commitTransaction'
  | 'abortTransaction' | 'createIndexes' | 'dropIndexes' | 'create' | 'drop'

/** An operation, as retryable writes and reads judge it. */
export interface MongoOperation {
  name: MongoOperationName
  /** A bulk write batch holding an updateMany or deleteMany (a `multi: true` statement). */
  multi?: boolean
  /** Write concern `{w: 0}`. */
  unacknowledged?: boolean
  /** An aggregate pipeline with a write stage (`$out` or `$merge`). */
  writeStage?: boolean
  inTransaction?: boolean
}

/** `mongodb.eligibility`: whether the operation takes part in retryable writes, reads and overload retries. */
export interface MongoEligibility extends MongoRuled {
  readonly class: 'read' | 'write' | 'command'
  readonly retryableWrite: boolean
  readonly retryableRead: boolean
  readonly overloadRetry: boolean
}

/** One attempt of an operation, for `mongodb.decide`. */
export interface MongoRequest {
  operation: MongoOperation
  /** The `retryWrites` URI option (default true). */
  retryWrites?: boolean
  /** The `retryReads` URI option (default true). */
  retryReads?: boolean
  server?: MongoServerKind
  /** `maxAdaptiveRetries` (default 2). */
  maxAdaptiveRetries?: number
  /** Retries already made (default 0). */
  attempts?: number
  /** An earlier attempt of this command failed with an overload error. */
  overloaded?: boolean
  elapsedMs?: MillisInput
  /** The CSOT timeoutMS, if any. */
  timeoutMs?: MillisInput
  /** A draw in [0, 1) for the overload backoff's jitter. */
  random?: number
}

/** `mongodb.decide`: send the command again after `delayMs`. */
export interface MongoRetry extends MongoRuled {
  readonly action: 'retry'
  readonly delayMs: number
  /** Retries made once this decision is followed (pass it back as `attempts`). */
  readonly attempts: number
  /** Whether an overload error has now been seen (pass it back as `overloaded`). */
  readonly overloaded: boolean
  /** The labels the error carries once the driver has added its own. */
  readonly labels: readonly string[]
  readonly retryableAs: 'write' | 'read' | 'overload'
}

/** `mongodb.decide`: surface the error to the application. */
export interface MongoSurface extends MongoRuled {
  readonly action: 'surface'
  readonly delayMs?: undefined
  readonly attempts: number
  readonly overloaded: boolean
  readonly labels: readonly string[]
  readonly retryableAs?: undefined
}

/** One MongoDB attempt's decision; narrow it by `action`. */
export type MongoDecision = MongoRetry | MongoSurface

/** A transaction command, for the labels its error carries. */
export type TransactionCommand = 'commit' | 'abort' | 'other'

/** The driver session's transaction state, as the runner reports it. */
export type SessionState = 'no_transaction' | 'starting' | 'in_progress' | 'committed' | 'aborted'

/** The withTransaction state machine's state, as `transactionStep` takes it back. */
export interface TransactionStateInput {
  timeoutMs: MillisInput
  /** The limit is a CSOT timeoutMS (the timeout error is then a CSOT timeout error). */
  csot?: boolean
  transactionAttempt?: number
  phase: 'not_started' | 'in_callback' | 'committing' | 'done'
}

/** The withTransaction state machine's state, as it returns it. */
export interface TransactionState extends TransactionStateInput {
  readonly timeoutMs: number
  readonly csot: boolean
  readonly transactionAttempt: number
  readonly phase: 'not_started' | 'in_callback' | 'committing' | 'done'
}

/** What happened since the last step (the runner reports it). */
export type TransactionEvent =
  | { event: 'begin' }
  | { event: 'start_failed'; error: MongoError }
  | { event: 'callback_returned'; session: SessionState }
  | { event: 'callback_raised'; session: SessionState; error: MongoError; elapsedMs: MillisInput; random?: number }
  | { event: 'commit_succeeded' }
  | { event: 'commit_failed'; error: MongoError; elapsedMs: MillisInput; random?: number }

/** What the withTransaction state machine tells the runner to do; narrow it by `action`. */
export type TransactionAction =
  | { readonly action: 'start_transaction' | 'commit' | 'return' }
  | (MongoRuled & { readonly action: 'retry_commit' })
  | (MongoRuled & { readonly action: 'retry_transaction'; readonly abortFirst: boolean; readonly backoffMs: number })
  | (MongoRuled & { readonly action: 'raise'; readonly abortFirst: boolean; readonly error: MongoErrorRecord })
  | (MongoRuled & {
      readonly action: 'raise_timeout'
      readonly abortFirst: boolean
      readonly labels: readonly string[]
      readonly csot: boolean
      readonly cause: MongoErrorRecord
    })

/** `mongodb.withTransaction`: the actions taken, the last one, the backoffs and the final state. */
export interface TransactionReplay {
  readonly actions: readonly TransactionAction['action'][]
  readonly last: TransactionAction | null
  readonly backoffsMs: readonly number[]
  readonly state: TransactionState
}

/** An application's operation, for seed 000's idempotency analysis. */
export interface MongoAppOperation {
  op: 'find' | 'findOne' | 'insertOne' | 'insertMany' | 'updateOne' | 'updateMany' | 'replaceOne' | 'deleteOne' | 'deleteMany'
  filter?: MongoDocument
  /** The update document (or pipeline), or the replacement. */
  update?: MongoDocument | readonly MongoDocument[]
  /** The documents to insert. */
  documents?: readonly MongoDocument[]
  /** The fields with a unique index (default `['_id']`). */
  uniqueFields?: readonly string[]
  upsert?: boolean
}

/** An update by array index (`items.0.qty`), which a retry after a concurrent change can aim at another element. */
export interface PositionalHazard {
  readonly operator: string
  readonly path: string
  readonly arrayPath: string
  readonly index: string
  /** The same update by the element's identity (`items.$.qty`, with the filter naming the element). */
  readonly suggestedPath: string
  readonly elementIdField: string
  readonly nested: boolean
  readonly section: string
}

/** `mongodb.idempotency`: whether running the operation twice equals running it once, and why. */
export interface IdempotencyReport extends MongoRuled {
  readonly idempotent: boolean
  readonly nonIdempotentOperators: readonly string[]
  readonly duplicateKeyOnRetryIsSuccess: boolean
  readonly hazards: readonly PositionalHazard[]
}

/** The DuplicateKey error (11000) a retried insert met. */
export interface DuplicateKeyError {
  code: number
  keyPattern?: MongoDocument
  /** The index name, e.g. `_id_`. */
  index?: string
  keyValue?: MongoDocument
}

/** One update of the pending-token rewrite, ready for `updateOne(filter, update, {upsert})`. */
export interface UpdateStep {
  readonly filter: MongoDocument
  readonly update: MongoDocument
  readonly upsert: boolean
}

/** `mongodb.pendingTokenRewrite`: the two idempotent steps, and the pipeline that completes interrupted ones. */
export interface PendingTokenRewrite {
  readonly step1: UpdateStep
  readonly step2: UpdateStep
  readonly cleanupPipeline: MongoDocument[] | null
  readonly section: string
}

/** A driver-shaped session (the Node driver's `ClientSession` fits). */
export interface TransactionSession {
  startTransaction(options?: unknown): void
  commitTransaction(): Promise<unknown>
  abortTransaction(): Promise<unknown>
  /** Read when `transaction.state` is absent. */
  inTransaction?(): boolean
  /** The driver's state name, e.g. `TRANSACTION_IN_PROGRESS`. */
  readonly transaction?: { readonly state: string }
}

/** A transaction's action of kind `A`, e.g. `TransactionActionOf<'raise_timeout'>`. */
export type TransactionActionOf<A extends TransactionAction['action']> = Extract<TransactionAction, { readonly action: A }>

/** Options of `mongodb.runTransaction`: `onRetry` gets its `retry_commit` and `retry_transaction` actions, `onGiveUp` its `raise_timeout`; no `onStats` (a transaction has no RunStats). */
export interface RunTransactionOptions extends Omit<RunnerOptions<TransactionActionOf<'retry_commit' | 'retry_transaction'>, TransactionActionOf<'raise_timeout'>>, 'onStats'> {
  /** The CSOT timeoutMS (default: the spec's 120 s retry limit). */
  timeoutMs?: number
  /** Passed to `session.startTransaction`. */
  transactionOptions?: unknown
}

/** MongoDB retry rules (the core's, through its JSON API); camelCase in and out. */
export declare const mongodb: Readonly<{
  /** Network, command or state-change error, with the code's name, group and retryability. */
  classifyError(error: MongoError): MongoErrorClassification
  /** Whether a write may be retried after `error` (RetryableWriteError label, pre-4.4 codes). */
  retryableWriteError(
    error: MongoError,
    server?: MongoServerKind,
    retryWrites?: boolean,
  ): MongoRuled & { readonly retryable: boolean; readonly labels: readonly string[] }
  /** Whether a read may be retried after `error`. */
  retryableReadError(error: MongoError): MongoRuled & { readonly retryable: boolean }
  /** Which of the attempts' errors surfaces to the user (the NoWritesPerformed rules). */
  surfacedError(
    kind: 'write' | 'read' | 'command',
    errors: readonly MongoError[],
  ): { readonly index: number; readonly code: number | null; readonly labels: readonly string[] }
  /** Whether an operation takes part in retryable writes or reads at all. */
  eligibility(operation: MongoOperation, retryWrites?: boolean, retryReads?: boolean): MongoEligibility
  /** Retry once, retry after an overload backoff, or surface: one attempt's decision. */
  decide(request: MongoRequest, error: MongoError): MongoDecision
  /** The client-backpressure backoff for an overload retry (`attempt`: the retry number, first 1). */
  overloadBackoff(attempt: number, random: number, baseBackoffMs?: MillisInput): { readonly delayMs: number; readonly ceilingMs: number }
  /** The TransientTransactionError / UnknownTransactionCommitResult labels an error carries. */
  transactionLabels(command: TransactionCommand, error: MongoError): { readonly labels: readonly string[] }
  /** The backoff before retrying a whole transaction. */
  transactionBackoff(transactionAttempt: number, random: number): { readonly backoffMs: number }
  /** Replays withTransaction over a list of events: the actions, the last one, backoffs and final state. */
  withTransaction(events: readonly TransactionEvent[], timeoutMs?: MillisInput): TransactionReplay
  /** One step of the withTransaction state machine: (state, event) → {state, action}. */
  transactionStep(
    state: TransactionStateInput,
    event: TransactionEvent,
  ): { readonly state: TransactionState; readonly action: TransactionAction }
  /** Seed 000's analysis of an operation: idempotent or not, and the positional-index hazards. */
  idempotency(operation: MongoAppOperation): IdempotencyReport
  /** Whether a DuplicateKeyError on a retried insert of `documentId` means the first attempt succeeded. */
  duplicateKey(documentId: unknown, error: DuplicateKeyError): MongoRuled & { readonly firstAttemptSucceeded: boolean }
  /** Seed 000's two-step pending-token rewrite of a non-idempotent update (`pendingField` default `'pending'`). */
  pendingTokenRewrite(
    filter: MongoDocument,
    update: MongoDocument,
    token: unknown,
    upsert?: boolean,
    pendingField?: string,
  ): PendingTokenRewrite
  /**
   * Runs `callback(session)` in a transaction and commits it, retrying as the driver's
   * `withTransaction` does (the core's state machine decides); resolves with the callback's result.
   */
  runTransaction<S extends TransactionSession, T>(
    session: S,
    callback: (session: S) => T | PromiseLike<T>,
    options?: RunTransactionOptions,
  ): Promise<T>
}>
