// Type definitions of `aws`, the AWS SDKs' retry modes (re-exported by ./retrypolicy.d.ts). The
// retry document, the limiter's document and its snapshot are the shared JSON form (snake_case, the
// same in every language); an attempt's error and the quota's verdict are camelCase objects;
// answers are camelCase and frozen. Every call that needs a clock takes your `nowMs`.

import type { MillisInput } from './retrypolicy.js'
import type { BudgetVerdict, RetryCause } from './budget.js'

/** The SDKs' retry modes (`retry_mode`). */
export type AwsMode = 'standard' | 'adaptive' | 'legacy'

/** Standard mode's behaviour: the classic timing, or the SDKs' 2026 update (`AWS_NEW_RETRIES_2026`). */
export type AwsBehavior = 'classic' | '2026'

/** An AWS retry document; every field may be left out and takes the SDKs' default. */
export interface AwsRetryDocument {
  version?: 1 | null
  /** Default `standard`. */
  mode?: AwsMode | null
  /** Standard and adaptive: default `classic`. */
  behavior?: AwsBehavior | null
  /** Attempts in all, the first included (default 3; `2026` DynamoDB 4; legacy 5, DynamoDB 10). */
  max_attempts?: number | null
  /** The service as the SDK names it (`dynamodb`, `sts`; legacy: the endpoint prefix). */
  service?: string | null
  /** Standard and adaptive: the longest backoff (default 20000). */
  max_backoff_ms?: MillisInput | null
  /** Standard and adaptive: the operation long-polls (SQS `ReceiveMessage`, ...). */
  long_polling?: boolean | null
}

/** What a failed attempt produced: a response (its status, the AWS error code) or none (a connection error, a timeout), never both. */
export interface AwsError {
  /** The AWS error code (`Error.Code`, `__type`), compared exactly. */
  code?: string | null
  /** The HTTP status, 100 to 599. */
  status?: number | null
  /** No response: the connection failed, was refused, reset or closed. */
  connectionError?: boolean | null
  /** No response: the attempt timed out connecting or reading. */
  timeout?: boolean | null
  /** The modeled error shape's retryable trait (needs `code`). */
  retryableTrait?: 'transient' | 'throttling' | null
  /** The `x-amz-retry-after` header (ms), as received (read by the 2026 behaviour). */
  retryAfter?: string | null
  /** DynamoDB: the body's CRC32 did not match `x-amz-crc32`. */
  crc32Mismatch?: boolean | null
}

/** The decision after one failed attempt. */
export interface AwsDecision {
  readonly action: 'retry' | 'no_retry'
  /** Retry: the wait before it. */
  readonly delayMs: number | null
  /** No retry: the wait before returning the error (2026, a long-polling call whose retry the quota refused). */
  readonly waitMs: number | null
  /** The bound the jitter drew under. */
  readonly ceilingMs: number | null
  /** A valid `x-amz-retry-after`, when the 2026 behaviour read one. */
  readonly retryAfterMs: number | null
  /** The error is retryable at all (attempts and quota aside). */
  readonly retryable: boolean
  /** The error is a throttling error (record it so in an adaptive limiter). */
  readonly throttling: boolean
  /** What a retry costs the quota for: ask it `quota.tryRetry(nowMs, decision.cause)`; null when not retryable. */
  readonly cause: RetryCause | null
  readonly attempts: number
  readonly maxAttempts: number
  /** The stable name of the rule that decided (`transient_status`, `throttling_error_code`, `max_attempts_reached`, a quota's rule, ...). */
  readonly rule: string
  readonly section: string
}

/** Options of `aws.decide`. */
export interface AwsDecideOptions {
  /** Your draw in [0, 1), needed when a jittered wait is computed. */
  random?: number | null
  /** The retry quota's verdict on this retry (`tryRetry(nowMs, decision.cause)`): a refusal makes a no-retry. */
  budgetVerdict?: BudgetVerdict | null
}

/** The adaptive rate limiter's constants (default: the SDKs'). */
export interface RateLimiterDocument {
  version?: 1 | null
  min_fill_rate?: number | null
  beta?: number | null
  scale_constant?: number | null
  smoothing?: number | null
}

/** The limiter's state in the shared JSON form (`AdaptiveRateLimiter.restore` reads it back). */
export interface RateLimiterSnapshot {
  version?: 1 | null
  enabled: boolean
  fill_rate: number
  max_capacity: number
  capacity: number
  last_refill_ms: MillisInput
  last_max_rate: number
  last_throttle_ms: MillisInput
  measured_rate: number
  last_bucket_ms: MillisInput
  request_count: number
}

/** The limiter's answer before an attempt. */
export interface AcquireVerdict {
  /** Send now; else ask again after `waitMs`. */
  readonly acquired: boolean
  readonly waitMs: number | null
  readonly rule: 'limiter_off' | 'token_taken' | 'wait_for_token'
  readonly section: string
  /** Tokens left. */
  readonly capacity: number
}

/** The limiter's rates after a response. */
export interface RateUpdate {
  readonly throttled: boolean
  readonly measuredRate: number
  readonly calculatedRate: number
  readonly fillRate: number
  readonly maxCapacity: number
  readonly enabled: boolean
  /** The term that gave `calculatedRate`: β × the rate in use, or the CUBIC curve. */
  readonly rule: 'throttle_beta' | 'cubic_curve'
  /** What bounded the fill rate (the floor when both did); null: it is `calculatedRate`. */
  readonly bound: 'capped_at_twice_measured' | 'raised_to_min_fill_rate' | null
}

/** The AWS SDKs' retry modes: `aws.RetryConfig`, `aws.AdaptiveRateLimiter` (values and types), `aws.decide`. */
export declare namespace aws {
  /** A checked retry configuration; read-only. */
  export class RetryConfig {
    /** A configuration from its document (or its text); none: standard mode's defaults. Errors name `config.<field>`. */
    constructor(document?: AwsRetryDocument | string | null)
    readonly mode: AwsMode
    /** Null in legacy mode. */
    readonly behavior: AwsBehavior | null
    readonly maxAttempts: number
    readonly service: string | null
    /** Null in legacy mode. */
    readonly maxBackoffMs: number | null
    /** Null in legacy mode. */
    readonly longPolling: boolean | null
    /** The normalized document. */
    toJSON(): AwsRetryDocument & { version: 1; mode: AwsMode; max_attempts: number }
  }

  /** The decision after a failed attempt (`config` null: standard mode's defaults; a document is checked first). */
  export function decide(config: RetryConfig | AwsRetryDocument | null, attempts: number, error: AwsError, options?: AwsDecideOptions | null): AwsDecision

  /**
   * Adaptive mode's client-side rate limiter (the SDKs' token bucket with its CUBIC rate) on your
   * clock. One object is one state; share it as a RetryBudget is shared (one owner, or snapshots).
   */
  export class AdaptiveRateLimiter {
    /** A limiter from its document (none: the SDKs' constants), created at `startMs` (default 0). */
    constructor(document?: RateLimiterDocument | string | null, startMs?: MillisInput | null)
    /** A limiter in the state `state` (what `snapshot()` returned, or its JSON text; required). */
    static restore(document: RateLimiterDocument | string | null | undefined, state: RateLimiterSnapshot | string): AdaptiveRateLimiter
    /** Before each attempt at `nowMs`: send now, or wait `waitMs` and ask again. */
    acquire(nowMs: MillisInput): AcquireVerdict
    /** After each response at `nowMs`, throttled or not. */
    record(nowMs: MillisInput, throttled: boolean): RateUpdate
    /** The state in the shared JSON form. */
    snapshot(): RateLimiterSnapshot & { version: 1 }
    /** The normalized document. */
    toJSON(): Required<RateLimiterDocument>
  }
}
