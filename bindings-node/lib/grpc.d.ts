// Type definitions of `grpc`, gRPC's retry and hedging policy (gRFC A6; re-exported by
// ./retrypolicy.d.ts). The service config and its policies are gRPC's own JSON (camelCase, passed as
// they are); a call's state, attempt and hedging event are camelCase objects; answers are camelCase
// and frozen. Milliseconds and nanoseconds are numbers (a bigint past 2^53 − 1).

import type { MillisInput } from './retrypolicy.js'
import type { BudgetDocument, BudgetVerdict, RetryBudget } from './budget.js'

/** gRPC's status codes, by name (the numbers 0 to 16 in that order). */
export type GrpcCodeName =
  | 'OK'
  | 'CANCELLED'
  | 'UNKNOWN'
  | 'INVALID_ARGUMENT'
  | 'DEADLINE_EXCEEDED'
  | 'NOT_FOUND'
  | 'ALREADY_EXISTS'
  | 'PERMISSION_DENIED'
  | 'RESOURCE_EXHAUSTED'
  | 'FAILED_PRECONDITION'
  | 'ABORTED'
  | 'OUT_OF_RANGE'
  | 'UNIMPLEMENTED'
  | 'INTERNAL'
  | 'UNAVAILABLE'
  | 'DATA_LOSS'
  | 'UNAUTHENTICATED'

/** A status code as input: its name (any case; the core reads `"Unavailable"` too) or its number. */
export type GrpcCodeInput = GrpcCodeName | Lowercase<GrpcCodeName> | number

/** A proto3 JSON duration: seconds with up to 9 decimals and an `s` (`"0.1s"`, `".5s"`). */
export type GrpcDuration = `${number}s` | `.${number}s`

/** `retryPolicy` as gRPC's service config writes it. */
export interface GrpcRetryPolicyDocument {
  /** Attempts in all, the original included: an integer greater than 1 (capped at the client's cap). */
  maxAttempts: number
  /** The first retry's backoff bound, greater than 0. */
  initialBackoff: GrpcDuration
  /** The bound's cap, greater than 0. */
  maxBackoff: GrpcDuration
  /** The bound's growth per retry, greater than 0. */
  backoffMultiplier: number
  /** The codes to retry: non-empty. */
  retryableStatusCodes: readonly GrpcCodeInput[]
}

/** `hedgingPolicy` as gRPC's service config writes it. */
export interface GrpcHedgingPolicyDocument {
  /** Attempts in all, the original included: an integer greater than 1 (capped at the client's cap). */
  maxAttempts: number
  /** The wait between hedges; absent or `"0s"`: every attempt at once. */
  hedgingDelay?: GrpcDuration
  /** The codes after which other hedges may still succeed. */
  nonFatalStatusCodes?: readonly GrpcCodeInput[]
}

/** `retryThrottling`: the token bucket every call to the server shares. */
export interface GrpcRetryThrottlingDocument {
  /** An integer in (0, 1000]. */
  maxTokens: number
  /** Greater than 0, read to the thousandth. */
  tokenRatio: number
}

/** One method config: the names it applies to and its policy (one of the two, or none). */
export interface GrpcMethodConfigDocument {
  /** `{service}` names a service's every method, `{service, method}` one method, `{}` the default config. */
  name?: readonly { service?: string; method?: string }[]
  retryPolicy?: GrpcRetryPolicyDocument
  hedgingPolicy?: GrpcHedgingPolicyDocument
  /** gRPC's other method config fields (`timeout`, `waitForReady`, ...) are ignored. */
  [other: string]: unknown
}

/** A service config as gRPC writes it (only what gRFC A6 reads; other fields are ignored). */
export interface GrpcServiceConfigDocument {
  methodConfig?: readonly GrpcMethodConfigDocument[]
  retryThrottling?: GrpcRetryThrottlingDocument
  [other: string]: unknown
}

/** The client's side: its cap on `maxAttempts` (a channel argument in gRPC). */
export interface GrpcClientOptions {
  /** Policies asking for more attempts get this many (at least 2; gRFC A6's default 5). */
  maxAttemptsCap?: number | null
}

/** How far a failed attempt got (gRFC A6, "Transparent Retries"). */
export type GrpcAttemptReach = 'processed' | 'never_sent' | 'unprocessed'

/** How one attempt of a call ended. */
export interface GrpcAttempt {
  status: GrpcCodeInput
  /** The values of the `grpc-retry-pushback-ms` trailer, in order (none: no pushback). */
  pushback?: readonly string[]
  /** Response headers arrived (or the outgoing message overflowed the retry buffer): never retried. */
  committed?: boolean
  /** How far it got (default `processed`). */
  reach?: GrpcAttemptReach
}

/** What the caller knows of its call before a decision (the previous decision's `next`). */
export interface GrpcRetryState {
  /** Attempts sent that count toward `maxAttempts`, the one that just failed included (at least 1). */
  attempts: number
  /** Retries made so far, transparent ones included. */
  retries?: number
  /** Retries since the last pushback: the backoff's exponent. */
  retriesSincePushback?: number
  /** Time since the call started. */
  elapsedMs?: MillisInput
  /** The call's deadline, in ms from its start (none: no deadline). */
  deadlineMs?: MillisInput | null
}

/** The state a retry decision hands on (a GrpcRetryState, every field set). */
export interface GrpcRetryNext {
  readonly attempts: number
  readonly retries: number
  readonly retriesSincePushback: number
  readonly elapsedMs: number
  readonly deadlineMs: number | null
}

/** How the backoff bound is jittered: A6's ±20 % (the default), or `full`, its draw before 2024-08-29. */
export type GrpcJitter = 'full' | 'plus_minus_20_percent'

/** What the throttling bucket is told of an attempt. */
export type GrpcThrottleEvent = 'success' | 'failure'

/** The decision after one attempt. */
export interface GrpcRetryDecision {
  readonly action: 'succeeded' | 'retry' | 'fail'
  /** Retry: the wait before the next attempt. */
  readonly delayMs: number | null
  /** Retry: a transparent retry (not counted toward `maxAttempts`). */
  readonly transparent: boolean
  /** The valid pushback the server sent. */
  readonly pushbackMs: number | null
  /** What the throttling bucket was told (recorded in it when one was lent). */
  readonly throttle: GrpcThrottleEvent | null
  /** The bucket's verdict, when it was asked. */
  readonly budget: BudgetVerdict | null
  /** Retry: the state to pass with the next attempt's decision. */
  readonly next: GrpcRetryNext | null
  /** The stable name of the rule that decided (`exponential_backoff`, `pushback`, `committed`, ...). */
  readonly rule: string
  /** Its source. */
  readonly section: string
}

/** Options of `grpc.retry`. */
export interface GrpcRetryOptions {
  /** Your draw in [0, 1), needed when a backoff is computed. */
  random?: number | null
  jitter?: GrpcJitter | null
  /** The server's throttling bucket (a RetryBudget of `ServiceConfig.throttling`), told and asked here. */
  throttling?: RetryBudget | null
  /** Your clock reading for the bucket (default 0). */
  nowMs?: MillisInput | null
}

/** Where a hedged call is (the previous step's `state`). */
export interface GrpcHedgeState {
  readonly sent: number
  readonly outstanding: number
  readonly stopped: boolean
  readonly done: boolean
  readonly lastStatus?: GrpcCodeName
}

/** What happened to a hedged call: it starts, the hedging delay ran out, an attempt ended, the host committed to one attempt. */
export type GrpcHedgeEvent =
  | 'start'
  | 'hedge_due'
  | 'committed'
  | { event: 'start' | 'hedge_due' | 'committed' }
  | { event: 'attempt_ended'; attempt: GrpcAttempt }

/** The answer to one event of a hedged call. */
export interface GrpcHedgeStep {
  /** Send this many attempts now. */
  readonly send: number
  /** Tell `hedge_due` after this many ms (replacing any earlier wait); null: no hedge is due. */
  readonly nextHedgeInMs: number | null
  /** Cancel every attempt still out. */
  readonly cancelOthers: boolean
  /** The call is over. */
  readonly end: 'succeeded' | 'failed' | null
  /** The status the call fails with. */
  readonly status: GrpcCodeName | null
  readonly throttle: GrpcThrottleEvent | null
  /** The bucket's verdict on the last hedge it was asked for. */
  readonly budget: BudgetVerdict | null
  /** The state to pass with the next event. */
  readonly state: GrpcHedgeState
  readonly rule: string
  readonly section: string
}

/** Options of `grpc.hedge`. */
export interface GrpcHedgeOptions {
  /** The server's throttling bucket, asked before each hedge and told of each ended attempt. */
  throttling?: RetryBudget | null
  /** Your clock reading for the bucket (default 0). */
  nowMs?: MillisInput | null
}

/** gRPC's retry and hedging policy (gRFC A6): `grpc.ServiceConfig`, `grpc.RetryPolicy`, `grpc.HedgingPolicy` (values and types), `grpc.retry`, `grpc.hedge`. */
export declare namespace grpc {
  /** A validated `retryPolicy`; read-only. */
  export class RetryPolicy {
    /** Validates gRPC's JSON (or its text) as gRFC A6 asks; errors name `retryPolicy.<field>`. */
    constructor(document: GrpcRetryPolicyDocument | string, options?: GrpcClientOptions | null)
    readonly kind: 'retry'
    /** After the client's cap. */
    readonly maxAttempts: number
    readonly initialBackoffNs: number | bigint
    readonly maxBackoffNs: number | bigint
    readonly backoffMultiplier: number
    /** By number. */
    readonly retryableStatusCodes: readonly GrpcCodeName[]
    /** The validated policy as the JSON API writes it (`{kind: 'retry', max_attempts, ...}`). */
    toJSON(): Record<string, unknown>
  }

  /** A validated `hedgingPolicy`; read-only. */
  export class HedgingPolicy {
    /** Validates gRPC's JSON (or its text) as gRFC A6 asks; errors name `hedgingPolicy.<field>`. */
    constructor(document: GrpcHedgingPolicyDocument | string, options?: GrpcClientOptions | null)
    readonly kind: 'hedging'
    readonly maxAttempts: number
    readonly hedgingDelayNs: number | bigint
    readonly nonFatalStatusCodes: readonly GrpcCodeName[]
    /** The validated policy as the JSON API writes it (`{kind: 'hedging', max_attempts, ...}`). */
    toJSON(): Record<string, unknown>
  }

  /** A validated service config; read-only. */
  export class ServiceConfig {
    /** Validates gRPC's JSON (or its text); errors name the field (`methodConfig[0].retryPolicy.maxAttempts`). */
    constructor(document: GrpcServiceConfigDocument | string, options?: GrpcClientOptions | null)
    /** `retryThrottling` as a token bucket's budget document (`new RetryBudget(config.throttling)`), or null. */
    readonly throttling: (BudgetDocument & { kind: 'token_bucket'; version: 1 }) | null
    /** The policy for `service`/`method`: the exact method's, else the service's, else the default config's; null for none. */
    policyFor(service: string, method?: string | null): RetryPolicy | HedgingPolicy | null
    /** Which name matched. */
    matched(service: string, method?: string | null): 'exact' | 'service' | 'default' | null
  }

  /** The decision after one attempt (`policy` null: the method has none; only transparent retries). */
  export function retry(policy: RetryPolicy | null, state: GrpcRetryState, attempt: GrpcAttempt, options?: GrpcRetryOptions | null): GrpcRetryDecision
  /** One step of a hedged call (`state` null: not started). */
  export function hedge(policy: HedgingPolicy, state: GrpcHedgeState | null, event: GrpcHedgeEvent, options?: GrpcHedgeOptions | null): GrpcHedgeStep
}
