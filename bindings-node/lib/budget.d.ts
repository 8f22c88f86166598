// Type definitions of retry budgets, circuit breakers and storms (re-exported by ./retrypolicy.d.ts).
// Documents and snapshots are the shared JSON form (snake_case, as every language writes them, so
// a snapshot stored by one process restores in another); verdicts and decisions are camelCase.
// Every call takes the caller's clock reading `nowMs` (whole milliseconds; any clock, used alike).

import type { Decision, MillisInput, Policy, Request, RetryReasonInput, RetryReasonName } from './retrypolicy.js'
import type { RunDoneStep, RunStats } from './retry-runners.js'

/** The kinds of retry budget. */
export type BudgetKind = 'token_bucket' | 'retry_quota' | 'percentage'

/** What a retry repeats: the AWS retry quota charges more to retry a timeout (classic) or a throttling error (its 2026 costs). */
export type RetryCause = 'error' | 'timeout' | 'throttling'

/** A budget document; fields left out take their source's defaults. */
export type BudgetDocument =
  /** gRPC retry throttling (gRFC A6): retries only while the bucket holds more than half of `max_tokens` (10, 0.1). */
  | { version?: 1 | null; kind: 'token_bucket'; max_tokens?: number | null; token_ratio?: number | null }
  /** The AWS SDKs' standard-mode retry quota (500 tokens, cost 5, timeout cost 10, increment 1). */
  | {
      version?: 1 | null
      kind: 'retry_quota'
      capacity?: number | null
      retry_cost?: number | null
      timeout_cost?: number | null
      throttling_cost?: number | null
      /** The cost table the other costs default from: `classic` (5, 10, 5) or the SDKs' `2026` (14, 14, 5). */
      costs?: 'classic' | '2026' | null
      no_retry_increment?: number | null
    }
  /** Finagle's RetryBudget: `percent` of the window's requests plus `min_retries_per_sec` (20, 10000 ms, 10). */
  | { version?: 1 | null; kind: 'percentage'; percent?: number | null; ttl_ms?: MillisInput | null; min_retries_per_sec?: number | null }

/** A budget's state in the shared JSON form (`RetryBudget.restore` reads it back). */
export interface BudgetSnapshot {
  version?: 1 | null
  kind: BudgetKind
  /** Token bucket: thousandths of a token; retry quota: tokens. */
  balance?: number
  /** Percentage: the window's slices (slice `n` covers `[n, n + 1) × ttlMs / 10` of the caller's clock), oldest first. */
  buckets?: { slice: number; requests: number; retries: number }[]
}

/** The rules behind a budget's verdict. */
export type BudgetRule =
  | 'token_bucket_above_half'
  | 'token_bucket_at_or_below_half'
  | 'retry_quota_available'
  | 'retry_quota_exhausted'
  | 'percentage_within_budget'
  | 'percentage_budget_spent'

/** A budget's answer to "may a retry be sent now?". */
export interface BudgetVerdict {
  readonly permitted: boolean
  /** `budget_exhausted` when refused. */
  readonly cause: 'budget_exhausted' | null
  readonly kind: BudgetKind
  readonly rule: BudgetRule
  /** The source text of the rule. */
  readonly source: string
  /** Thousandths of a token (token bucket), tokens (retry quota), or retries left in the window (percentage). */
  readonly balance: number
}

/** Something that happened, told to a budget (`final`: a failure that is not retried): a name, or an object for a success after a retry or a retry of a timeout. */
export type BudgetEvent =
  | 'request'
  | 'success'
  | 'failure'
  | 'timeout'
  | 'final'
  | 'retry'
  | { kind: 'success'; afterRetry?: RetryCause | null }
  | { kind: 'retry'; cause?: RetryCause | null }
  | { kind: 'request' | 'failure' | 'timeout' | 'final' }

/**
 * A retry budget, bounding retries across requests. One object is one state: calls on it are
 * synchronous, so one event loop never interleaves them. Each worker thread has its own objects;
 * to share one budget across workers or processes, keep it in one owner thread, or store
 * `snapshot()` where the host likes (a SharedArrayBuffer-backed store, Redis) and `restore` it.
 */
export declare class RetryBudget {
  /** A budget from its document (an object, or its JSON text), full. */
  constructor(document: BudgetDocument | string)
  /** A budget of `document` in the state `state` (what `snapshot()` returned, or its JSON text; required: null throws missing_field). */
  static restore(document: BudgetDocument | string, state: BudgetSnapshot | string): RetryBudget
  /** Whether a retry for `cause` (none or null: `'error'`) may be sent at `nowMs`; changes nothing. */
  permit(nowMs: MillisInput, cause?: RetryCause | null): BudgetVerdict
  /** Asks for a retry at `nowMs` and records it when permitted: the one call before sending a retry. */
  tryRetry(nowMs: MillisInput, cause?: RetryCause | null): BudgetVerdict
  /** Tells the budget what happened at `nowMs` (a `request`: a first attempt sent). */
  record(nowMs: MillisInput, event: BudgetEvent): void
  /** The state in the shared JSON form. */
  snapshot(): BudgetSnapshot
  /** The normalized document (what `JSON.stringify` writes). */
  toJSON(): BudgetDocument & { version: 1 }
}

/** A circuit breaker document (Couchbase's defaults: enabled, 20, 50, 5000, 60000, 5000). */
export interface BreakerDocument {
  version?: 1 | null
  enabled?: boolean | null
  /** Outcomes the window needs before it can trip. */
  volume_threshold?: number | null
  /** Failed share of the window, in percent, that trips it. */
  error_threshold_percentage?: number | null
  /** How long the circuit stays open before one canary. */
  sleep_window_ms?: MillisInput | null
  /** How long a counting window lasts. */
  rolling_window_ms?: MillisInput | null
  /** How long the canary may take before it counts as failed. */
  canary_timeout_ms?: MillisInput | null
}

/** The three states of a circuit. */
export type BreakerState = 'closed' | 'open' | 'half_open'

/** A breaker's state in the shared JSON form (`CircuitBreaker.restore` reads it back). */
export interface BreakerSnapshot {
  version?: 1 | null
  state: BreakerState
  /** When the circuit opened or the canary was sent (absent when closed). */
  since_ms?: MillisInput | null
  window_start_ms?: MillisInput | null
  total: number
  failures: number
}

/** A breaker's answer to "may a request be sent now?". */
export interface BreakerVerdict {
  readonly permitted: boolean
  /** This request is the half-open canary. */
  readonly canary: boolean
  /** The circuit's state after this call. */
  readonly state: BreakerState
  /** `CIRCUIT_BREAKER_OPEN` when refused: the reason to hand `decide`. */
  readonly reason: 'CIRCUIT_BREAKER_OPEN' | null
  readonly rule: 'breaker_disabled' | 'breaker_closed' | 'breaker_canary' | 'breaker_open' | 'breaker_canary_in_flight'
  readonly source: string
}

/** What moved a circuit from one state to another. */
export type BreakerChangeRule =
  | 'breaker_tripped'
  | 'breaker_canary'
  | 'canary_succeeded'
  | 'canary_failed'
  | 'canary_timed_out'
  | 'canary_released'

/**
 * One change of a circuit's state made by a call (`permit`, `record`, or a run's step): the state
 * before it, the state after it and the rule. One call may make two changes (a canary past its
 * timeout counted failed, then the caller made the next canary): each is reported on its own, in order.
 */
export interface BreakerChange {
  readonly from: BreakerState
  readonly to: BreakerState
  readonly rule: BreakerChangeRule
}

/** Options of a CircuitBreaker. */
export interface CircuitBreakerOptions {
  /** The name its metrics carry as `retrypolicy.breaker.name` (default `'default'`), so two breakers keep two gauge points. */
  name?: string | null
  /** Called after each change of the breaker's state (`this`: the breaker); what it throws becomes a process warning (RETRYPOLICY_LISTENER_THREW), the change standing. */
  onStateChange?: ((this: CircuitBreaker, change: BreakerChange) => void) | null
}

/**
 * A per-endpoint circuit breaker with Couchbase's parameters: closed, open, half-open with one
 * canary. Threads and processes share it as `RetryBudget` says (one owner, or snapshots). Each
 * change of its state, by its own calls or by a run's steps, goes to `onStateChange`, to the
 * `'stateChange'` event and to BREAKER_CHANNEL. In Node it is an `EventEmitter` of `node:events`
 * (declared structurally, so that a page's project needs no Node types: it passes where an
 * EventEmitter is wanted, e.g. `events.once(breaker, 'stateChange')`); in a page, an emitter with
 * the methods declared here.
 */
export declare class CircuitBreaker {
  /** A closed breaker from its document (an object or JSON text); none: Couchbase's defaults. */
  constructor(document?: BreakerDocument | string | null, options?: CircuitBreakerOptions | null)
  /** A breaker of `document` in the state `state` (what `snapshot()` returned, or its JSON text; required: null throws missing_field). */
  static restore(document: BreakerDocument | string | null | undefined, state: BreakerSnapshot | string, options?: CircuitBreakerOptions | null): CircuitBreaker
  /** The changes of state the last `permit` or `record` made (directly, or in a run's step), in order; empty for none. */
  readonly lastChanges: readonly BreakerChange[]
  /** The callback given as `onStateChange`, or null. */
  readonly onStateChange: ((this: CircuitBreaker, change: BreakerChange) => void) | null
  /** The name its metrics carry as `retrypolicy.breaker.name` (`'default'` when none was given). */
  readonly name: string
  /** Listens to every change of the breaker's state. */
  on(event: 'stateChange', listener: (this: CircuitBreaker, change: BreakerChange) => void): this
  /** Listens to every change of the breaker's state (`on`). */
  addListener(event: 'stateChange', listener: (this: CircuitBreaker, change: BreakerChange) => void): this
  /** Listens to every change, before the listeners already there. */
  prependListener(event: 'stateChange', listener: (this: CircuitBreaker, change: BreakerChange) => void): this
  /** Listens to the next change. */
  once(event: 'stateChange', listener: (this: CircuitBreaker, change: BreakerChange) => void): this
  /** Listens to the next change, before the listeners already there. */
  prependOnceListener(event: 'stateChange', listener: (this: CircuitBreaker, change: BreakerChange) => void): this
  /** Stops `listener` (given to `on` or `once`) listening. */
  off(event: 'stateChange', listener: (change: BreakerChange) => void): this
  /** Stops `listener` (given to `on` or `once`) listening (`off`). */
  removeListener(event: 'stateChange', listener: (change: BreakerChange) => void): this
  /** Stops every listener of `event` (of every event when none is named). */
  removeAllListeners(event?: 'stateChange'): this
  /** Calls each listener of `event` with `change`; whether there was one. */
  emit(event: 'stateChange', change: BreakerChange): boolean
  /** How many listeners `event` has. */
  listenerCount(event: 'stateChange'): number
  /** The listeners of `event` (a `once` listener as it was given). */
  listeners(event: 'stateChange'): Function[]
  /** The listeners of `event` (a `once` listener as its wrapper). */
  rawListeners(event: 'stateChange'): Function[]
  /** The events that have listeners. */
  eventNames(): (string | symbol)[]
  /** Sets how many listeners of one event before a warning (Node's; 0: no limit). */
  setMaxListeners(n: number): this
  /** How many listeners of one event before a warning. */
  getMaxListeners(): number
  /** Whether a request may be sent at `nowMs`; past the sleep window this request becomes the one canary. */
  permit(nowMs: MillisInput): BreakerVerdict
  /** Tells the breaker how a request ended at `nowMs`. */
  record(nowMs: MillisInput, outcome: 'success' | 'failure' | 'timeout'): void
  /** The circuit's state at `nowMs` (an unanswered canary past its timeout counts as failed); changes nothing. */
  state(nowMs: MillisInput): BreakerState
  /** The state in the shared JSON form. */
  snapshot(): BreakerSnapshot
  /** The normalized document (what `JSON.stringify` writes). */
  toJSON(): Required<BreakerDocument>
}

/** A retry `decide` wanted and the budget refused: a no-retry citing the budget's rule and source. */
export interface BudgetRefusal {
  readonly action: 'no_retry'
  readonly cause: 'budget_exhausted'
  readonly reason: RetryReasonName
  readonly rule: BudgetRule
  /** The budget's source. */
  readonly section: string
  readonly attempts: number
  readonly idempotent: boolean
  /** The delay `decide` asked for. */
  readonly refusedDelayMs: number
  /** The budget's verdict. */
  readonly budget: BudgetVerdict
}

/** `decide`'s decision, or the budget's refusal of its retry. */
export type BudgetedDecision = Decision | BudgetRefusal

/** `decide`, then a retry the budget's `verdict` refuses becomes a no-retry (cause `budget_exhausted`); no verdict: `decide`'s decision. */
export declare function decideWithBudget(
  request: Request,
  reason: RetryReasonInput,
  policy?: Policy | null,
  verdict?: BudgetVerdict | null,
): BudgetedDecision

/** decideWithBudget's decision and the core's sentence about it (naming the budget's rule when it refused). */
export declare function explainWithBudget(
  request: Request,
  reason: RetryReasonInput,
  policy?: Policy | null,
  verdict?: BudgetVerdict | null,
): { readonly decision: BudgetedDecision; readonly sentence: string }

/** A retry storm: many clients sending `request` under a failure rate, sharing a budget and a breaker. */
export interface StormScenario {
  request: Request
  /** The reason a failed attempt reports. */
  reason: RetryReasonInput
  /** New requests per second, evenly spaced (1 to 10,000). */
  requestsPerSecond: number
  /** How long new requests keep arriving (at most 600,000 ms). */
  durationMs: MillisInput
  /** Time each attempt takes before its outcome is known. */
  latencyMs: MillisInput
  /** The share of attempts that fail, in [0, 1] (default 1). */
  failureRate?: number
  policy?: Policy | null
  /** Draws for jittered delays, used in turn. */
  draws?: number[]
  /** A budget every client shares (a document, or a RetryBudget: its document). */
  budget?: BudgetDocument | RetryBudget | null
  /** A breaker every client shares (a document, or a CircuitBreaker: its document). */
  breaker?: BreakerDocument | CircuitBreaker | null
}

/** What the storm did, in totals; `amplification` is attempts sent per request. */
export interface StormReport {
  readonly requests: number
  readonly attemptsSent: number
  readonly amplification: number
  readonly budgetRefusals: number
  readonly breakerRejections: number
  readonly succeeded: number
  readonly failed: number
  readonly timedOut: number
  readonly budgetKind: BudgetKind | null
}

/** Replays a retry storm through `decide`, the shared budget and the shared breaker. */
export declare function simulateStorm(scenario: StormScenario): StormReport

/** A circuit breaker refused a runner's attempt: nothing was sent (the run handed `decide` CIRCUIT_BREAKER_OPEN). */
export declare class CircuitOpenError extends Error {
  readonly name: 'CircuitOpenError'
  readonly code: 'ECIRCUITOPEN'
  readonly verdict: BreakerVerdict
  /** Set when a runner gives up with it: the machine's done step. */
  readonly retryStep?: RunDoneStep
  /** Set when a runner gives up with it: what the run did. */
  readonly retryStats?: RunStats
}

/** The `node:diagnostics_channel` channel on which every breaker publishes each change of its state (where that module exists). */
export declare const BREAKER_CHANNEL: 'retrypolicy:breaker'

/** A message on BREAKER_CHANNEL: the breaker and its change. */
export interface BreakerChangeMessage extends BreakerChange {
  readonly breaker: CircuitBreaker
}
