// Type definitions for the `retrypolicy` package (hand-written; the generated `index.d.ts` types
// the private native addon underneath). Milliseconds are JS numbers: non-negative whole numbers up
// to 2^53 − 1; a `bigint` is accepted where noted for the full u64 range of the wire format.


/** The RFC 0049 retry reasons. */
export type RetryReasonName =
  | 'UNKNOWN'
  | 'SOCKET_NOT_AVAILABLE'
  | 'SERVICE_NOT_AVAILABLE'
  | 'NODE_NOT_AVAILABLE'
  | 'KV_NOT_MY_VBUCKET'
  | 'KV_COLLECTION_OUTDATED'
  | 'KV_ERROR_MAP_RETRY_INDICATED'
  | 'KV_LOCKED'
  | 'KV_TEMPORARY_FAILURE'
  | 'KV_SYNC_WRITE_IN_PROGRESS'
  | 'KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS'
  | 'SERVICE_RESPONSE_CODE_INDICATED'
  | 'SOCKET_CLOSED_WHILE_IN_FLIGHT'
  | 'CIRCUIT_BREAKER_OPEN'
  | 'QUERY_PREPARED_STATEMENT_FAILURE'
  | 'QUERY_INDEX_NOT_FOUND'
  | 'ANALYTICS_TEMPORARY_FAILURE'
  | 'SEARCH_TOO_MANY_REQUESTS'
  | 'VIEWS_TEMPORARY_FAILURE'
  | 'VIEWS_NO_ACTIVE_PARTITION'
  | 'QUERY_ERROR_RETRYABLE'

/** A reason name as accepted on input: the table's names plus the RFC's alias spelling of 0xa4's. */
export type RetryReasonInput = RetryReasonName | 'KV_SYNC_RE_COMMIT_IN_PROGRESS'

/** Every reason, name → name (frozen): `RetryReason.KV_LOCKED === 'KV_LOCKED'`. */
export declare const RetryReason: Readonly<{ [K in RetryReasonName]: K }>

/** One row of the RFC 0049 RetryReason table. */
export interface ReasonFlags {
  readonly name: RetryReasonName
  readonly allowsNonIdempotentRetry: boolean
  readonly alwaysRetry: boolean
}

/** The KV operations of the catalog (RFC 0049 idempotent list decides which are idempotent). */
export type KvOperationName =
  | 'get'
  | 'get_and_lock'
  | 'get_and_touch'
  | 'get_replica'
  | 'lookup_in'
  | 'exists'
  | 'noop'
  | 'observe_cas'
  | 'observe_seqno'
  | 'get_collection_id'
  | 'get_collection_manifest'
  | 'carrier_config'
  | 'global_config'
  | 'insert'
  | 'upsert'
  | 'replace'
  | 'remove'
  | 'append'
  | 'prepend'
  | 'increment'
  | 'decrement'
  | 'touch'
  | 'unlock'
  | 'mutate_in'

/** HTTP methods of the cluster manager and management APIs. */
export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS'

/** What is being retried: a service plus what its idempotency depends on. */
export type Operation =
  | { readonly service: 'kv'; readonly operation: KvOperationName }
  | { readonly service: 'query' | 'analytics'; readonly readonly?: boolean }
  | { readonly service: 'search' | 'views' }
  | { readonly service: 'cluster_manager' | 'management'; readonly method: HttpMethod }

/** A built-in strategy, by name. */
export type StrategyName = 'best_effort' | 'fail_fast'

/** Milliseconds on input: a safe whole number, or a bigint for the wire format's full u64 range. */
export type MillisInput = number | bigint

/** The state of one request when it failed; the operation's fields sit beside the request's own. */
export type Request = Operation & {
  /** The request's timeout. Required. */
  readonly timeoutMs: MillisInput
  /** Time since the request started (default 0). */
  readonly elapsedMs?: MillisInput
  /** Retries already made (default 0). */
  readonly attempts?: number
  /** Overrides the idempotent-operation list when set. */
  readonly idempotent?: boolean | null
  /** A per-request built-in strategy (RFC 0049 "Request Annotation"). */
  readonly strategy?: StrategyName | null
  /** The caller's random draw in [0, 1), required when the policy has jitter. */
  readonly random?: number | null
  /** The previous retry's delay, for decorrelated jitter. */
  readonly previousDelayMs?: MillisInput | null
  /** Reasons of earlier retries, for strategies that look at them. */
  readonly previousReasons?: readonly RetryReasonInput[] | null
}

/** The rules a retry can come from. */
export type RetryRule = 'always_retry_controlled_backoff' | 'best_effort_backoff' | 'custom_strategy'
/** The rules a refusal can come from. */
export type NoRetryRule =
  | 'deadline_passed'
  | 'unknown_never_retried'
  | 'best_effort_not_idempotent'
  | 'fail_fast'
  | 'custom_strategy'
/** Why a request is not retried. */
export type NoRetryCause = 'not_idempotent' | 'strategy_declined' | 'deadline_passed' | 'unknown_reason'

/** Retry after `delayMs` (frozen). */
export interface RetryDecision {
  readonly action: 'retry'
  /** Milliseconds to wait before resending (a bigint only past 2^53 − 1, reachable only from bigint inputs). */
  readonly delayMs: number
  /** The delay was cut to the time left before the timeout. */
  readonly capped: boolean
  /** Cancel (time out) when the delay ends instead of resending. */
  readonly thenCancel: boolean
  readonly reason: RetryReasonName
  readonly rule: RetryRule
  /** The spec section behind the rule. */
  readonly section: string
  /** Retries made before this one. */
  readonly attempts: number
  /** Whether the request counted as idempotent. */
  readonly idempotent: boolean
}

/** Do not retry: fail the request now, and why (frozen). */
export interface NoRetryDecision {
  readonly action: 'no_retry'
  readonly cause: NoRetryCause
  readonly reason: RetryReasonName
  readonly rule: NoRetryRule
  readonly section: string
  readonly attempts: number
  readonly idempotent: boolean
}

/** The outcome of one decision: narrow on `action`. */
export type Decision = RetryDecision | NoRetryDecision

/** The result of classifying one failure (frozen). */
export interface Classification {
  /** The reason to pass to `decide`, or null: fail without retry handling. */
  readonly reason: RetryReasonName | null
  /** The stable name of the rule that matched. */
  readonly rule: string
  /** The spec section of that rule. */
  readonly section: string
  /** The error to surface instead (e.g. `'cas_mismatch'`), or null. */
  readonly surfaceAs: string | null
}

/** The stable error codes shared by every language. */
export type ErrorCode =
  | 'unknown_reason'
  | 'unknown_name'
  | 'invalid_duration'
  | 'invalid_random'
  | 'out_of_range'
  | 'invalid_type'
  | 'unknown_field'
  | 'missing_field'
  | 'malformed_json'
  | 'unsupported_version'

/** What retrypolicy throws: an `Error` with the core's stable `code` and the offending `field`. */
export interface RetryPolicyError extends Error {
  readonly code: ErrorCode
  /** The input the error is about, e.g. `timeoutMs`, `backoff.factor`, `previousReasons[1]`. */
  readonly field: string
}

/** Every stable error code. */
export declare const ERROR_CODES: readonly ErrorCode[]
/** Whether `e` was thrown by retrypolicy. */
export declare function isRetryPolicyError(e: unknown): e is RetryPolicyError

/** The policy document (snake_case JSON, as in the project README); every field optional. */
export interface PolicyDocument {
  version?: 1
  strategy?: StrategyName
  backoff?:
    | {
        kind: 'exponential'
        min_ms?: number | string | bigint
        max_ms?: number | string | bigint
        factor?: number
        first?: 'min' | 'zero'
      }
    | { kind: 'controlled' }
    | { kind: 'fixed'; delay_ms: number | string | bigint }
  jitter?: 'none' | 'full' | 'equal' | 'decorrelated'
  compat?: {
    collection_outdated_not_always_retry?: boolean
    retry_kv_busy?: boolean
    query_retry_4040_to_4090?: boolean
    retry_unknown_if_idempotent?: boolean
  }
}

/** The normalized policy document: every field present. */
export interface NormalizedPolicyDocument {
  version: 1
  strategy: StrategyName
  backoff:
    | { kind: 'exponential'; min_ms: number | string; max_ms: number | string; factor: number; first: 'min' | 'zero' }
    | { kind: 'controlled' }
    | { kind: 'fixed'; delay_ms: number | string }
  jitter: 'none' | 'full' | 'equal' | 'decorrelated'
  compat: {
    collection_outdated_not_always_retry: boolean
    retry_kv_busy: boolean
    query_retry_4040_to_4090: boolean
    retry_unknown_if_idempotent: boolean
  }
}

/** The whole retry configuration, parsed and validated once; immutable. */
export declare class Policy {
  /** From the JSON document (text or object); none is the RFC 0049 default. */
  constructor(document?: string | PolicyDocument)
  /** Same as `new Policy(document)`. */
  static fromJson(document: string | PolicyDocument): Policy
  /** The normalized document as JSON text. */
  toJson(): string
  /** The normalized document (what `JSON.stringify(policy)` writes). */
  toJSON(): NormalizedPolicyDocument
}

/** A KV error map document (RFC 0013) as the server sends it. */
export interface ErrorMapDocument {
  version: number
  revision?: number
  errors: Record<string, { name?: string; desc?: string; attrs?: string[]; [other: string]: unknown }>
}

/** A KV error map, parsed once; pass it to `classifyKv` for unknown statuses. */
export declare class ErrorMap {
  /** Parses the server's error map document (text or object). */
  constructor(document: string | ErrorMapDocument)
}

/** A host strategy as a function: a delay in ms, or null/undefined for "do not retry". */
export type StrategyFunction = (request: Request, reason: RetryReasonName) => number | null | undefined
/** A host strategy as an object. */
export interface StrategyObject {
  /** A delay in ms, or null/undefined for "do not retry". */
  retryAfter(request: Request, reason: RetryReasonName): number | null | undefined
}
/** What `decide` accepts as a strategy. Always-retry reasons never reach it; its delay is still capped. */
export type RetryStrategy = StrategyFunction | StrategyObject

/** RFC 0049's default strategy; subclass it and override `retryAfter` to change one case. */
export declare class BestEffort implements StrategyObject {
  /** Best effort with `policy`'s backoff and jitter (the RFC default when omitted). */
  constructor(policy?: Policy)
  /** The policy given, or null. */
  readonly policy: Policy | null
  /** Best effort's delay in ms, or null for "do not retry". */
  retryAfter(request: Request, reason: RetryReasonName): number | null
}

/** RFC 0049's fail-fast strategy: never retries (always-retry reasons still are). */
export declare class FailFast implements StrategyObject {
  /** Always null. */
  retryAfter(request: Request, reason: RetryReasonName): null
}

/** The core's version. */
export declare const version: string

/** The canonical name of a reason (aliases accepted); throws `unknown_reason`. */
export declare function parseReason(reason: string): RetryReasonName
/** The reason's RFC table row. */
export declare function reasonFlags(reason: RetryReasonInput): ReasonFlags
/** Whether a non-idempotent request may be retried for this reason. */
export declare function allowsNonIdempotentRetry(reason: RetryReasonInput): boolean
/** Whether this reason is retried regardless of the strategy. */
export declare function alwaysRetry(reason: RetryReasonInput): boolean
/** Whether RFC 0049's idempotent-operation list calls the operation idempotent. */
export declare function isIdempotent(operation: Operation): boolean

/** Decides whether and when to retry `request` after `reason`. */
export declare function decide(
  request: Request,
  reason: RetryReasonInput,
  policy?: Policy | null,
  strategy?: RetryStrategy | null,
): Decision
/**
 * `decide` for each request; `reasons` is one for all or one per request. An error names the
 * request (`requests[2].timeoutMs`) or the reason (`reasons[2]`).
 */
export declare function decideMany(
  requests: readonly Request[],
  reasons: RetryReasonInput | readonly RetryReasonInput[],
  policy?: Policy | null,
): Decision[]
/**
 * The orchestrator's steps before a host strategy is asked (deadline, UNKNOWN, always-retry
 * reasons, a per-request built-in strategy): the decision, or null when the host must be asked.
 */
export declare function decideBeforeStrategy(
  request: Request,
  reason: RetryReasonInput,
  policy?: Policy | null,
): Decision | null
/** A host strategy's answer (ms, or null for "do not retry") as the decision, capped to the timeout. */
export declare function decideAfterStrategy(
  request: Request,
  reason: RetryReasonInput,
  retryAfterMs: MillisInput | null | undefined,
): Decision
/** Best effort's answer (to defer to from a strategy): a delay in ms, or null. */
export declare function bestEffortDelay(request: Request, reason: RetryReasonInput, policy?: Policy | null): number | null
/** The core's one-line log message for a decision. */
export declare function formatDecision(decision: Decision): string
/** The core's plain one-sentence explanation of `decision` for `request`, naming the rule and spec section. */
export declare function explain(request: Request, decision: Decision): string

/** Options of the classifiers that read compatibility options or the error map. */
export interface ClassifyOptions {
  /** Its `compat` options apply (e.g. `retry_kv_busy`). */
  policy?: Policy | null
}
/** Options of `classifyKv`. */
export interface ClassifyKvOptions extends ClassifyOptions {
  /** The server's error map, consulted for unknown statuses (parse it once with `new ErrorMap`). */
  errorMap?: ErrorMap | ErrorMapDocument | string | null
}
/** Classifies a KV status (a number, or a `"0x.."` string) for a KV operation. */
export declare function classifyKv(
  operation: KvOperationName,
  status: number | `0x${string}`,
  options?: ClassifyKvOptions,
): Classification
/** Options of `classifyQuery`. */
export interface ClassifyQueryOptions extends ClassifyOptions {
  /** The error object's `"retry"` flag: retried as QUERY_ERROR_RETRYABLE (not for code 12016). */
  retry?: boolean | null
}
/** Classifies the first error of a query response: its code, message and `retry` flag. */
export declare function classifyQuery(code: number, message?: string, options?: ClassifyQueryOptions): Classification
/** Classifies the first error of an analytics response. */
export declare function classifyAnalytics(code: number): Classification
/** Classifies a search response's HTTP status. */
export declare function classifySearch(httpStatus: number): Classification
/** Classifies a views response from its HTTP status and body. */
export declare function classifyViews(httpStatus: number, body?: string): Classification
/** Failures the SDK observes itself. */
export type DispatchFailure =
  | 'socket_not_available'
  | 'service_not_available'
  | 'node_not_available'
  | 'circuit_breaker_open'
  | 'socket_closed_while_in_flight'
/** Names the reason for a failure the SDK observed before or during transmission. */
export declare function classifyDispatch(failure: DispatchFailure): Classification

/** RFC 0049's controlled backoff in ms after `attempt` retries. */
export declare function controlledBackoffMs(attempt: number): number
/**
 * The policy's best-effort delay in ms after `attempt` retries; with jitter a draw in [0, 1) is
 * required. A bigint only when the policy's bounds exceed 2^53 − 1.
 */
export declare function backoffDelayMs(
  policy: Policy | null | undefined,
  attempt: number,
  random?: number | null,
  previousDelayMs?: MillisInput | null,
): number

/** A request from the wire form (snake_case, `*_ms` numbers or decimal strings); past 2^53 − 1 → bigint. */
export declare function requestFromJson(document: string | Record<string, unknown>): Request
/** A request in the wire form, as JSON text. */
export declare function requestToJson(request: Request): string

/** A failure pattern to replay. */
export interface Scenario {
  request: Request
  /** Each attempt's outcome in order: a reason, or null for success. */
  outcomes: readonly (RetryReasonInput | null)[]
  /** Repeat the last outcome once the list runs out (else the next attempt succeeds). */
  repeatLast?: boolean
  /** How long each attempt takes. */
  latencyMs: MillisInput
  /** Random draws used in turn by jittered delays. */
  draws?: readonly number[]
  policy?: Policy | null
}
/** One attempt of a timeline. */
export interface Step {
  readonly attempt: number
  readonly sentAtMs: number
  readonly doneAtMs: number
  readonly reason: RetryReasonName | null
  readonly decision: Decision | null
}
/** A replayed schedule. */
export interface Timeline {
  readonly steps: readonly Step[]
  readonly ending: 'succeeded' | 'failed' | 'timed_out' | 'attempt_limit'
  readonly totalMs: number
  readonly waitedMs: number
}
/** Replays a whole schedule through `decide`. */
export declare function simulate(scenario: Scenario): Timeline

/** One structured record per decision. */
export interface DecisionRecord {
  readonly action: Decision['action']
  readonly reason: RetryReasonName
  readonly attempts: number
  readonly delayMs: number | null
  readonly rule: RetryRule | NoRetryRule
  readonly section: string
  readonly cause: NoRetryCause | null
  readonly service: Operation['service']
  /** The core's one-line log message. */
  readonly message: string
  readonly decision: Decision
}

/** Options of an Orchestrator. */
export interface OrchestratorOptions {
  policy?: Policy | null
  strategy?: RetryStrategy | null
  /** Called with one record per decision. */
  onDecision?: (record: DecisionRecord) => void
}

/**
 * `decide` with a fixed policy and strategy that reports every decision (callback and `'decision'` event).
 * In Node it is an `EventEmitter` of `node:events`; in a page, an emitter with the methods declared here.
 */
export declare class Orchestrator {
  /** `{policy?, strategy?, onDecision?}`. */
  constructor(options?: OrchestratorOptions)
  /** The policy every decision uses. */
  readonly policy: Policy | null | undefined
  /** The host strategy every decision uses. */
  readonly strategy: RetryStrategy | null | undefined
  /** Called with one record per decision. */
  readonly onDecision: ((record: DecisionRecord) => void) | undefined
  /** Decides, reports the record, and returns the decision. */
  decide(request: Request, reason: RetryReasonInput): Decision
  /** Listens to every decision's record. */
  on(event: 'decision', listener: (record: DecisionRecord) => void): this
  /** Listens to the next decision's record. */
  once(event: 'decision', listener: (record: DecisionRecord) => void): this
  /** Stops `listener` (given to `on` or `once`) listening. */
  off(event: 'decision', listener: (record: DecisionRecord) => void): this
  /** Calls each listener of `event` with `args`; whether there was one. */
  emit(event: 'decision', record: DecisionRecord): boolean
  /** How many listeners `event` has. */
  listenerCount(event: 'decision'): number
}

// ---- MongoDB, HTTP and the runners, declared in their own files ----------------------------------

export * from './mongodb.js'
export * from './http.js'
export * from './retry-runners.js'
export * from './budget.js'
export * from './grpc.js'
export * from './aws.js'
export * from './otel.js'
