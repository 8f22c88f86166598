// Type definitions of the runners (re-exported by ./retrypolicy.d.ts): the retry loop, `retryFetch`
// and what they share with `mongodb.runTransaction`; their decisions come from the core.

import type { MillisInput, Operation, Policy, PolicyDocument, RetryReasonInput, RetryReasonName, RetryStrategy } from './retrypolicy.js'
import type { HttpStepDecision } from './http.js'
import type { MongoDecision, MongoError, MongoOperation, TransactionAction, TransactionActionOf } from './mongodb.js'
import type { BreakerChange, BreakerVerdict, BudgetedDecision, BudgetVerdict, CircuitBreaker, CircuitOpenError, RetryBudget } from './budget.js'
import type { GrpcAttempt, GrpcJitter, GrpcRetryDecision, GrpcRetryPolicyDocument } from './grpc.js'
import type { AwsDecision, AwsError, AwsRetryDocument, aws } from './aws.js'

// ---- the retry run: the core's machine ------------------------------------------------------------

/** RFC 0049's rules for a run (`decide`). */
export interface RunDecideRules {
  operation: Operation
  /** Overrides the idempotent-operation list. */
  idempotent?: boolean | null
  /** A per-request built-in strategy. */
  strategy?: 'best_effort' | 'fail_fast' | null
  /** The policy (a Policy, or its snake_case document); the RFC default when absent. */
  policy?: Policy | PolicyDocument | null
}

/** The HTTP loop's rules for a run (`http.nextStep`). */
export interface RunHttpRules {
  /** The request's method; absent, the request is taken as idempotent. */
  method?: string | null
  /** The caller's word that the request is idempotent (or not) whatever its method. */
  idempotent?: boolean | null
  /** The backoff when no Retry-After applies (default 100 ms × 2^n up to 10 s), snake_case as in a policy. */
  backoff?: PolicyDocument['backoff']
  jitter?: PolicyDocument['jitter']
}

/** MongoDB's rules for a run (retryable reads and writes, overload retries). */
export interface RunMongodbRules {
  operation: MongoOperation
  retryWrites?: boolean
  retryReads?: boolean
  server?: string
  maxAdaptiveRetries?: number
}

/** gRPC's rules for a run (gRFC A6, `grpc.retry`): outcomes `{kind: 'grpc', ...}`. */
export interface RunGrpcRules {
  /** The method's `retryPolicy`, gRPC's JSON as it is; absent: only transparent retries. */
  retryPolicy?: GrpcRetryPolicyDocument | null
  /** The client's cap on `maxAttempts` (default 5). */
  maxAttemptsCap?: number | null
  jitter?: GrpcJitter | null
}

/** The AWS SDKs' rules for a run (`aws.decide`; the run's budget is the retry quota): outcomes `{kind: 'aws', error}`. */
export interface RunAwsRules {
  /** An aws.RetryConfig or its snake_case document; absent: standard mode's defaults. */
  config?: aws.RetryConfig | AwsRetryDocument | null
}

/** One run's configuration: the rules that decide and its bounds. */
export interface RunConfig {
  rules: { decide: RunDecideRules } | { http: RunHttpRules } | { mongodb: RunMongodbRules } | { grpc: RunGrpcRules } | { aws: RunAwsRules }
  /** No attempt starts at or after this many ms from the start (required by `decide` rules). */
  timeoutMs?: MillisInput | null
  /** Attempts sent in all, the first included. */
  maxAttempts?: number | null
  /** Each attempt ends after this many ms at the latest. */
  attemptTimeoutMs?: MillisInput | null
}

/** How one attempt ended, as the host saw it (the machine classifies it). */
export type RunOutcome =
  | { kind: 'success' }
  /** A failure surfaced as it is (the host's classifier found no reason to retry it). */
  | { kind: 'final' }
  /** A failure the host classified itself; `timeout`: it was a timeout. */
  | { kind: 'reason'; reason: RetryReasonInput; timeout?: boolean }
  /** No answer; `sent: false` only when the request surely did not leave. */
  | { kind: 'network'; sent?: boolean | null }
  | { kind: 'http'; status: number; retryAfter?: string | null }
  /** A Couchbase KV status (a number or a "0x.." string). */
  | { kind: 'kv'; status: number | string }
  | { kind: 'mongodb'; error: MongoError }
  /** A gRPC attempt's end (`grpc` rules). */
  | ({ kind: 'grpc' } & GrpcAttempt)
  /** What an AWS attempt produced (`aws` rules). */
  | { kind: 'aws'; error: AwsError }
  /** The attempt reached the step's `timeoutMs`. */
  | { kind: 'timeout' }

/** How a run ended. */
export type RunEnd = 'succeeded' | 'final' | 'gave_up' | 'timed_out' | 'cancelled'

/** What a step is for an observer's signals and which hook fires: a retry, a wait for the breaker, a give-up, or neither (the core's `RunSignal`). */
export type RunSignal = 'retry' | 'breaker_wait' | 'give_up' | 'none'

/** What every step carries. */
interface RunStepBase {
  /** Send: the attempt to send (the first is 1); wait: the attempt that follows it; done: attempts sent. */
  readonly attempt: number
  /** The reason of the failure behind a wait or an end, when it has one. */
  readonly reason: RetryReasonName | null
  /** The stable name of the rule that decided. */
  readonly rule: string
  /** Its source. */
  readonly section: string
  /** Time since the run started, rounded up to whole ms. */
  readonly elapsedMs: number
  /** The wait a valid Retry-After asked for. */
  readonly retryAfterMs: number | null
  /** The domain's decision behind a wait or an end after a failure. */
  readonly decision: BudgetedDecision | HttpStepDecision | MongoDecision | GrpcRetryDecision | AwsDecision | null
  /** The budget's verdict, when it was asked for this step. */
  readonly budget: BudgetVerdict | null
  /** The breaker's verdict, when it was asked for this step. */
  readonly breaker: BreakerVerdict | null
  /** The changes of the breaker's state this step's call made (asking it, telling it the attempt's end, releasing a cancelled canary), in order; empty for none; the breaker reports each too. */
  readonly breakerChanges: readonly BreakerChange[]
  /** What the step is for an observer (the core decides it): `retry` (a wait after a failed attempt: `onRetry`), `breaker_wait` (a wait for the breaker's window: `onBreakerWait`), `give_up` (an end that gave up or timed out: `onGiveUp`) or `none`. */
  readonly signal: RunSignal
}

/** Send attempt `attempt` now; it must end within `timeoutMs` (none: no bound). */
export interface RunSendStep extends RunStepBase {
  readonly action: 'send'
  readonly timeoutMs: number | null
  readonly delayMs: null
  readonly end: null
}

/** Wait `delayMs`, then report `waitEnded`. */
export interface RunWaitStep extends RunStepBase {
  readonly action: 'wait'
  readonly timeoutMs: null
  readonly delayMs: number
  readonly end: null
}

/** The run is over: see `end`. */
export interface RunDoneStep extends RunStepBase {
  readonly action: 'done'
  readonly timeoutMs: null
  readonly delayMs: null
  readonly end: RunEnd
}

/** The machine's answer to one event. */
export type RunStep = RunSendStep | RunWaitStep | RunDoneStep

/** What a run shares and asks. */
export interface RunOptions {
  /** A budget shared with other runs. */
  budget?: RetryBudget | null
  /** A breaker shared with other runs. */
  breaker?: CircuitBreaker | null
  /** The host strategy `decide` rules ask (as `decide` accepts one). */
  strategy?: RetryStrategy | null
}

/** One retry run over the core's machine: report each event with the clock, do what the step says. */
export declare class Run {
  /** A run of `config`, checked (a typed error names the field). */
  constructor(config: RunConfig, options?: RunOptions)
  /** Starts the run at `nowMs` (monotonic ms, fractions allowed). */
  start(nowMs: number, random?: number): RunStep
  /** The attempt of a send step ended with `outcome`. */
  attemptEnded(outcome: RunOutcome, nowMs: number, random?: number, nowUnixMs?: MillisInput): RunStep
  /** The wait of a wait step is over. */
  waitEnded(nowMs: number, random?: number): RunStep
  /** The host cancelled the run. */
  cancel(nowMs: number): RunDoneStep
  /** Attempts sent so far. */
  readonly attemptsSent: number
  /** What the run did so far (read anew on each access). */
  readonly stats: RunStats
}

/** What a run did (the core's RunStats, as tenacity keeps `statistics` per call): counts, time, and the last step's rule and verdicts. */
export interface RunStats {
  /** Attempts sent. */
  readonly attempts: number
  /** Waits the rules asked for after a failed attempt (retries decided). */
  readonly retries: number
  /** All the waiting asked for (retries' and the breaker's), in ms. */
  readonly waitedMs: number
  /** Time since the run started at its last event, rounded up to whole ms. */
  readonly elapsedMs: number
  /** Retries the budget refused (each ends the run). */
  readonly budgetRefusals: number
  /** Attempts the breaker kept back (each a wait for its window, or the end). */
  readonly breakerRejections: number
  /** How the run ended, once it has. */
  readonly end: RunEnd | null
  /** The rule of the last step. */
  readonly lastRule: string | null
  /** The reason of the last step that had one. */
  readonly lastReason: RetryReasonName | null
  /** The budget's last verdict in this run. */
  readonly lastBudget: BudgetVerdict | null
  /** The breaker's last verdict in this run. */
  readonly lastBreaker: BreakerVerdict | null
}

/** The `node:diagnostics_channel` channel on which every runner publishes each decision (where that module exists). */
export declare const DECISION_CHANNEL: 'retrypolicy:decision'

/** A message on DECISION_CHANNEL: which runner, its step (retry, fetch) and decision, the failure it followed, the attempt (1-based). */
export interface DecisionMessage {
  readonly runner: 'retry' | 'fetch' | 'transaction'
  readonly step?: RunStep
  readonly decision: BudgetedDecision | HttpStepDecision | MongoDecision | TransactionAction | null
  readonly error: unknown
  readonly attempt: number
}

/**
 * What every runner accepts besides its own inputs: cancellation, hooks, and time and chance for
 * tests. `R`: the decision `onRetry` gets, `G`: the one `onGiveUp` gets (retry, retryFetch: the
 * machine's wait and done steps; runTransaction: its retry and timeout actions).
 */
export interface RunnerOptions<R = RunWaitStep, G = RunDoneStep> {
  /** Cancels the wait and the run: the promise rejects with the signal's reason. */
  signal?: AbortSignal
  /** Called before each wait after a failed attempt (the step's signal `retry`), with the decision to retry (retry, retryFetch: the wait step, its `delayMs` a number); not before a wait for the breaker (`onBreakerWait`). */
  onRetry?: (step: R, error: unknown) => void
  /** Called when the run gives up or times out (the step's signal `give_up`), with the decision that ended it (retry, retryFetch: the done step); not on a final failure or a cancel. */
  onGiveUp?: (step: G, error: unknown) => void
  /**
   * retry, retryFetch: called once the run is over, whatever its end (succeeded, final, gave up,
   * timed out, cancelled), with what it did. What it throws rejects a call that succeeded; after
   * any other end the call rejects with the run's own error and the hook's is rethrown outside it.
   * Not an option of runTransaction (it has no RunStats).
   */
  onStats?: (stats: RunStats) => void
  /** A monotonic clock in ms (default `performance.now`). */
  clock?: () => number
  /** Unix ms now, for Retry-After dates (default `Date.now`). */
  now?: () => number
  /** Draws in [0, 1) for jitter (default `Math.random`). */
  random?: () => number
  /** Waits `ms` (default `timers/promises` `setTimeout`, given the signal); skipped while `setTesting` makes sleeps instant. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>
}

/** `setTesting`'s settings. */
export interface TestingOptions {
  /** Skip every runner's sleeps (default true). */
  instant?: boolean
  /** Draw each run's jitter from a generator seeded with this integer (a call's own `random` wins); none: `Math.random`. */
  seed?: number | null
}

/**
 * Testing mode for every runner (retry, retryFetch, runTransaction) until set again: `true` makes
 * their sleeps instant while each skipped wait still moves the run's clock, so decisions, hooks,
 * channels and OpenTelemetry signals are a real run's, `false` makes
 * them real again; `{instant?, seed?}` also seeds the draws, so a test of a retried call runs in
 * milliseconds and draws the same jitter each run.
 */
export declare function setTesting(testing: boolean | TestingOptions): void
/** Whether testing mode is on (instant sleeps, or seeded draws). */
export declare function isTesting(): boolean

/** The budget and breaker a run shares with other runs (this package's objects; the machine asks and tells them). */
export interface GuardOptions {
  /**
   * Bounds retries across runs: the machine records the request and each sent attempt's end
   * (success, failure, timeout, final) and asks before each retry; a refusal ends the run.
   */
  budget?: RetryBudget | null
  /**
   * Asked before each attempt: a refused attempt is not sent and waits for the breaker's window
   * (or ends the run); each sent attempt's end is recorded (a final failure counts as a success).
   */
  breaker?: CircuitBreaker | null
  /**
   * Called before each wait for the breaker's window (the step's signal `breaker_wait`), with the
   * wait step and the breaker's refusal; `onRetry` is not (a breaker wait is no retry).
   */
  onBreakerWait?: (step: RunWaitStep, error: CircuitOpenError) => void
}

/** Maps a thrown error to the reason to retry for, or null/undefined: surface it now. */
export type Classifier = (error: unknown) => RetryReasonInput | null | undefined

/** What `fn` receives on each attempt. */
export interface AttemptContext {
  /** 1 for the first attempt. */
  readonly attempt: number
  /** The time this attempt must end within, in ms (the machine's bound). */
  readonly remainingMs: number
  /** Fires at the attempt's bound (`remainingMs`, a TimeoutError) or the caller's abort; the attempt is awaited no longer. */
  readonly signal: AbortSignal | undefined
}

/** Options of `retry`. */
export interface RetryOptions extends RunnerOptions, GuardOptions {
  /** What is retried (its idempotency comes from RFC 0049's list unless `idempotent` says). */
  operation: Operation
  /** The whole run's timeout in ms: nothing is retried, or waited for, past it. */
  timeoutMs: number
  policy?: Policy | null
  strategy?: RetryStrategy | null
  /** Overrides the idempotent-operation list. */
  idempotent?: boolean | null
  /** Attempts in all, the first included. */
  maxAttempts?: number
  /** Each attempt is cut after this many ms (it then counts as a timeout). */
  attemptTimeoutMs?: number
  /**
   * Names the reason to retry a thrown error for (null: surface it). Default: network errors and
   * HTTP status failures (`status`, `statusCode`, `response.status`, with Retry-After) are
   * classified by the core; a RetryTimeoutError never is retried.
   */
  classify?: Classifier
}

/**
 * What a runner sets on the error it gives up on (the last error: the rules, the attempts, the budget
 * or the breaker said stop): `retryStep`, the decision that ended the run (retry, retryFetch: the
 * machine's done step; runTransaction: its `raise` action, `TransactionActionOf<'raise'>`). The one
 * name every runner error carries its decision under: `RetryTimeoutError` and
 * `BodyNotReplayableError` have it too. Prefixed, as it goes on your own error objects.
 */
export interface RetryGaveUp<S extends RunDoneStep | TransactionAction = RunDoneStep> {
  readonly retryStep: S
  /** retry, retryFetch: what the run did (a transaction has none). */
  readonly retryStats?: RunStats
  /** @deprecated Use `retryStep.decision` (a transaction's: `retryStep`). Not enumerable. */
  readonly retryDecision: S extends RunDoneStep ? S['decision'] : S
}

/** Runs `fn` until it succeeds or the run machine says stop; rejects with the last error (a `RetryGaveUp`: `retryStep` set) or a RetryTimeoutError. */
export declare function retry<T>(fn: (context: AttemptContext) => T | PromiseLike<T>, options: RetryOptions): Promise<T>

/** A run ended at its deadline (or a transaction ran out of time): `retryStep` says why, `cause` is the last failure. */
export declare class RetryTimeoutError extends Error {
  readonly name: 'RetryTimeoutError'
  /** No classifier retries it: an outer run surfaces it as it is. */
  readonly code: 'ERR_RETRYPOLICY_TIMEOUT'
  /** The decision that ended the run: the machine's done step (retry, retryFetch; `end: 'timed_out'`), or a transaction's `raise_timeout` action. */
  readonly retryStep: RunDoneStep | TransactionActionOf<'raise_timeout'>
  /** retry, retryFetch: what the run did (a transaction's timeout has none). */
  readonly retryStats?: RunStats
  /** @deprecated Use `retryStep`. */
  readonly step: RunDoneStep | TransactionActionOf<'raise_timeout'>
  /** @deprecated Use `retryStep.decision` (a transaction's: `retryStep`). */
  readonly decision: BudgetedDecision | HttpStepDecision | MongoDecision | TransactionAction | null
  readonly cause: unknown
  /** For a transaction: the last error's labels. */
  readonly errorLabels?: readonly string[]
}

/** A Node/undici network error: SOCKET_NOT_AVAILABLE (nothing sent) or SOCKET_CLOSED_WHILE_IN_FLIGHT; else null. */
export declare function classifyNetworkError(error: unknown): RetryReasonName | null
/** An error carrying an HTTP status (`status`, `statusCode`, `response.status`): the core's `retryReason` for it (SERVICE_RESPONSE_CODE_INDICATED when transient); else null. */
export declare function classifyHttpStatus(error: unknown): RetryReasonName | null
/** `classifyNetworkError`, then `classifyHttpStatus`. */
export declare function classifyError(error: unknown): RetryReasonName | null

/**
 * Options of `retryFetch`: at least one of `maxAttempts` and `timeoutMs`. A retry the budget
 * refuses ends the run with the core's stop (outcome transient, the budget's rule and source).
 */
export interface RetryFetchOptions extends RunnerOptions, GuardOptions {
  /** Attempts in all, the first included. */
  maxAttempts?: number
  /** No attempt starts after this many ms, and each one is cut at it. */
  timeoutMs?: number
  /** Cuts each attempt after this many ms (a stall). */
  attemptTimeoutMs?: number
  /** The backoff when no Retry-After applies (default 100 ms × 2^n up to 10 s). */
  backoff?: PolicyDocument['backoff']
  jitter?: PolicyDocument['jitter']
  /**
   * The caller's word on whether the request may be repeated once sent (e.g. a POST with an
   * idempotency key); it wins over the method (default: RFC 9110 §9.2.2, by the core: GET, HEAD,
   * OPTIONS, TRACE, PUT and DELETE are idempotent).
   */
  idempotent?: boolean | null
  /** The fetch to call (default the global one). */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
  /** The most bytes of a streamed body buffered to resend it (default 1 MiB); a longer one is sent once. */
  maxBodyBytes?: number
}

/** The machine would retry, but the streamed body was longer than `maxBodyBytes` and was sent once. */
export declare class BodyNotReplayableError extends Error {
  readonly name: 'BodyNotReplayableError'
  readonly code: 'ERR_RETRYPOLICY_BODY_NOT_REPLAYABLE'
  /** The machine's wait step that was refused. */
  readonly retryStep: RunWaitStep
  /** @deprecated Use `retryStep`. */
  readonly step: RunWaitStep
  /** @deprecated Use `retryStep.decision`. */
  readonly decision: RunWaitStep['decision']
  /** The failure: the response (also in `response`, its body cancelled) or the network error. */
  readonly cause: unknown
  readonly response?: Response
}

/**
 * `fetch(input, init)` retried by the core's HTTP rules; resolves with the final response (or the
 * last transient one when retries end; a status outside 200..=599 is returned as final); rejects
 * with the last network error, a RetryTimeoutError, or a BodyNotReplayableError.
 */
export declare function retryFetch(input: string | URL | Request, init?: RequestInit, options?: RetryFetchOptions): Promise<Response>
