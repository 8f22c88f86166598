// Type definitions of the runners (re-exported by ./retrypolicy.d.ts): the retry loop, `retryFetch`
// and what they share with `mongodb.runTransaction`; their decisions come from the core.

import type { Decision, Operation, Policy, PolicyDocument, RetryReasonInput, RetryReasonName, RetryStrategy } from './retrypolicy.js'
import type { HttpStepDecision } from './http.js'
import type { TransactionAction } from './mongodb.js'
import type { BudgetedDecision, CircuitBreaker, RetryBudget } from './budget.js'

/** The `node:diagnostics_channel` channel on which every runner publishes each decision (where that module exists). */
export declare const DECISION_CHANNEL: 'retrypolicy:decision'

/** A message on DECISION_CHANNEL: which runner, its decision, the failure it followed, the attempt (1-based). */
export interface DecisionMessage {
  readonly runner: 'retry' | 'fetch' | 'transaction'
  readonly decision: BudgetedDecision | HttpStepDecision | TransactionAction
  readonly error: unknown
  readonly attempt: number
}

/** What every runner accepts besides its own inputs: cancellation, hooks, and time and chance for tests. */
export interface RunnerOptions<D, G = D> {
  /** Cancels the wait and the run: the promise rejects with the signal's reason. */
  signal?: AbortSignal
  /** Called before each wait. */
  onRetry?: (decision: D, error: unknown) => void
  /** Called when the run gives up. */
  onGiveUp?: (decision: G, error: unknown) => void
  /** A monotonic clock in ms (default `performance.now`). */
  clock?: () => number
  /** Draws in [0, 1) for jitter (default `Math.random`). */
  random?: () => number
  /** Waits `ms` (default `timers/promises` `setTimeout`, given the signal). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<unknown>
}

/**
 * The budget and breaker a run consults, at its `clock` (pass `clock: Date.now` when their state
 * is shared across processes). Anything with their methods will do, such as an object over a
 * shared store.
 */
export interface GuardOptions {
  /**
   * Bounds retries across runs: each run records its request and each answered attempt (a
   * retryable failure, a timeout when an attempt was cut, a success), and asks `tryRetry` before
   * each retry; a refusal ends the run with the core's decision (retry: its budget_exhausted
   * no-retry; retryFetch: its transient stop under the budget's rule).
   */
  budget?: Pick<RetryBudget, 'record' | 'tryRetry' | 'permit'> | null
  /**
   * Asked before each attempt: a refused attempt is not sent and fails with CIRCUIT_BREAKER_OPEN
   * (a CircuitOpenError). Each answered attempt is recorded; an error the classifier calls final
   * counts as a success (the endpoint answered).
   */
  breaker?: Pick<CircuitBreaker, 'record' | 'permit'> | null
}

/** Maps a thrown error to the reason to retry for, or null/undefined: surface it now. */
export type Classifier = (error: unknown) => RetryReasonInput | null | undefined

/** What `fn` receives on each attempt. */
export interface AttemptContext {
  /** 1 for the first attempt. */
  readonly attempt: number
  /** Time left before `timeoutMs`, in ms. */
  readonly remainingMs: number
  /** The run's signal, if any. */
  readonly signal: AbortSignal | undefined
}

/** Options of `retry`. */
export interface RetryOptions extends RunnerOptions<Decision, BudgetedDecision>, GuardOptions {
  /** What is retried (its idempotency comes from RFC 0049's list unless `idempotent` says). */
  operation: Operation
  /** The whole run's timeout in ms: nothing is retried, or waited for, past it. */
  timeoutMs: number
  policy?: Policy | null
  strategy?: RetryStrategy | null
  /** Overrides the idempotent-operation list. */
  idempotent?: boolean | null
  /** Default: `classifyError` (network errors, then HTTP status errors). */
  classify?: Classifier
}

/** Runs `fn` until it succeeds or `decide` says stop; rejects with the last error (`retryDecision` set) or a RetryTimeoutError. */
export declare function retry<T>(fn: (context: AttemptContext) => T | PromiseLike<T>, options: RetryOptions): Promise<T>

/** A run ended at its deadline (or a transaction ran out of time): `decision` says why, `cause` is the last failure. */
export declare class RetryTimeoutError extends Error {
  readonly name: 'RetryTimeoutError'
  readonly code: 'ETIMEDOUT'
  readonly decision: BudgetedDecision | HttpStepDecision | TransactionAction
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
export interface RetryFetchOptions extends RunnerOptions<HttpStepDecision>, GuardOptions {
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
  /** Unix ms now, for Retry-After dates (default `Date.now`). */
  now?: () => number
}

/**
 * `fetch(input, init)` retried by the core's HTTP rules; resolves with the final response (or the
 * last transient one when retries end); rejects with the last network error or a RetryTimeoutError.
 */
export declare function retryFetch(input: string | URL | Request, init?: RequestInit, options?: RetryFetchOptions): Promise<Response>
