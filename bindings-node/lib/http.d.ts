// Type definitions of `http`, the HTTP retry rules (re-exported by ./retrypolicy.d.ts). Inputs
// and outputs are camelCase (the core's snake_case wire form is converted inside), but for
// `backoff`, a piece of the policy document, snake_case as `new Policy(...)` takes it. Outputs
// are frozen. "Now" is passed in as Unix milliseconds.

import type { MillisInput, PolicyDocument, RetryReasonName } from './retrypolicy.js'
import type { BudgetVerdict } from './budget.js'

/** What an HTTP status means for a retry. */
export type HttpClass = 'success' | 'redirect' | 'rejection' | 'transient'

/** Whether a step's result is final or may change on a retry. */
export type HttpOutcome = 'final' | 'transient'

/** `http.classify`: a status's class, with the rule and spec section behind it. */
export interface HttpClassification {
  readonly class: HttpClass
  readonly outcome: HttpOutcome
  /** The status honours a Retry-After header. */
  readonly retryAfter: boolean
  readonly rule: string
  readonly section: string
  /** The RFC 0049 reason a generic runner gives a transient result; null for a final one. */
  readonly retryReason: RetryReasonName | null
}

/** The bounded retry loop: at least one of `maxAttempts` and `deadlineMs`. */
export interface HttpLoop {
  /** Attempts in all, the first included. */
  maxAttempts?: number
  /** No attempt starts later than this many ms after the first one started. */
  deadlineMs?: MillisInput
  /** The backoff when no Retry-After applies (snake_case, as in the policy document; default 100 ms × 2^n up to 10 s). */
  backoff?: PolicyDocument['backoff']
  jitter?: PolicyDocument['jitter']
  /** The request's HTTP method, for RFC 9110's idempotent-method rule; absent, the request is taken as idempotent. */
  method?: string | null
  /** The caller's word on whether the request may be repeated once sent; it wins over the method. */
  idempotent?: boolean | null
}

/** The loop so far. */
export interface HttpLoopState {
  /** Attempts made, the one that just finished included (1 after the first). */
  attempts: number
  /** Time since the first attempt started. */
  elapsedMs: MillisInput
  /** The previous delay, for decorrelated jitter. */
  previousDelayMs?: MillisInput
}

/** What the last attempt got: a response, or a network error (`sent: false` only when the request surely did not leave). */
export type HttpAttempt =
  | { kind: 'response'; status: number; retryAfter?: string }
  | { kind: 'network_error'; sent?: boolean }

/** `http.nextStep`: wait `delayMs`, then send again. */
export interface HttpRetryStep {
  readonly action: 'retry'
  readonly outcome?: undefined
  readonly class: HttpClass
  readonly delayMs: number
  /** The wait is the server's Retry-After. */
  readonly fromRetryAfter: boolean
  /** A Retry-After the server got wrong was ignored for the backoff. */
  readonly retryAfterIgnored: boolean
  /** What the server asked for, when its Retry-After set the wait. */
  readonly retryAfterMs?: number
  readonly rule: string
  readonly section: string
}

/** `http.nextStep`: stop, with the step's outcome (transient when attempts or time ran out). */
export interface HttpStopStep {
  readonly action: 'stop'
  readonly outcome: HttpOutcome
  readonly class: HttpClass
  readonly delayMs?: undefined
  readonly fromRetryAfter: boolean
  readonly retryAfterIgnored: boolean
  /** At the deadline: the wait the server asked for, so the caller can say when to try again. */
  readonly retryAfterMs?: number
  readonly rule: string
  readonly section: string
}

/** The HTTP loop's decision after an attempt; narrow it by `action`. */
export type HttpStepDecision = HttpRetryStep | HttpStopStep

/** HTTP retry rules (the core's, through its JSON API); camelCase in and out. */
export declare const http: Readonly<{
  /** Final success, final rejection or transient, for an HTTP status, or a network error when `networkError`. */
  classify(status?: number, networkError?: boolean): HttpClassification
  /** A Retry-After header (seconds or an HTTP date) as a delay in milliseconds. */
  retryAfter(value: string, nowUnixMs?: MillisInput): { readonly delayMs: number }
  /** An HTTP-date (any of RFC 9110's three forms) as Unix milliseconds; an RFC 850 date's two-digit year needs `nowUnixMs`. */
  parseDate(value: string, nowUnixMs?: MillisInput): { readonly unixMs: number }
  /**
   * What a bounded retry loop does after an attempt: retry after a delay, or stop and why (a
   * non-idempotent request is not repeated once it may have reached the server; no attempt is
   * scheduled at or past the deadline); a retry that `budgetVerdict` (from `RetryBudget.tryRetry`)
   * refuses stops, transient, with the budget's rule.
   */
  nextStep(loop: HttpLoop, state: HttpLoopState, attempt: HttpAttempt, nowUnixMs?: MillisInput, random?: number, budgetVerdict?: BudgetVerdict): HttpStepDecision
}>
