// Compiled with `tsc --noEmit --strict` by the tests: gRPC's retry and hedging policy (gRFC A6) and
// the AWS SDKs' retry modes as an application would use them, a run with their rules, and what
// must not compile.
import {
  RetryBudget,
  Run,
  aws,
  grpc,
  type AwsDecision,
  type GrpcHedgeState,
  type GrpcRetryDecision,
  type GrpcRetryState,
  type RateLimiterSnapshot,
} from 'retrypolicy'

// gRPC: the service config's policy for a method, the throttling bucket, one decision per attempt.
const config = new grpc.ServiceConfig({
  methodConfig: [
    { name: [{ service: 'helloworld.Greeter' }], retryPolicy: { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE', 14] } },
    { name: [{ service: 'helloworld.Greeter', method: 'Fanout' }], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.5s', nonFatalStatusCodes: ['unavailable'] } },
  ],
  retryThrottling: { maxTokens: 10, tokenRatio: 0.1 },
}, { maxAttemptsCap: 5 })
const throttling = config.throttling === null ? null : new RetryBudget(config.throttling)
const policy = config.policyFor('helloworld.Greeter', 'SayHello')
const how: 'exact' | 'service' | 'default' | null = config.matched('helloworld.Greeter', 'SayHello')
if (policy instanceof grpc.RetryPolicy) {
  const cap: number = policy.maxAttempts
  const bound: number | bigint = policy.initialBackoffNs
  let state: GrpcRetryState = { attempts: 1 }
  const d: GrpcRetryDecision = grpc.retry(policy, state, { status: 'UNAVAILABLE', pushback: ['250'] }, { random: Math.random(), throttling, nowMs: Date.now() })
  if (d.action === 'retry' && d.next !== null) state = d.next
  console.log(how, cap, bound, d.delayMs, d.budget?.balance, state.attempts)
}
const noPolicy: GrpcRetryDecision = grpc.retry(null, { attempts: 1 }, { status: 14, reach: 'never_sent' })
const hedging = new grpc.HedgingPolicy({ maxAttempts: 3, hedgingDelay: '0.5s' })
let hedgeState: GrpcHedgeState | null = null
for (const event of ['start', 'hedge_due', { event: 'attempt_ended', attempt: { status: 'OK' } }] as const) {
  const step = grpc.hedge(hedging, hedgeState, event, { throttling })
  hedgeState = step.state
  if (step.end !== null) console.log(step.end, step.status, noPolicy.rule)
}
const typed: grpc.RetryPolicy = new grpc.RetryPolicy({ maxAttempts: 2, initialBackoff: '.1s', maxBackoff: '1s', backoffMultiplier: 1.5, retryableStatusCodes: ['ABORTED'] })
console.log(typed.retryableStatusCodes.join(), JSON.stringify(typed))

// AWS: standard mode's decision, the quota asked with the decision's cause, the adaptive limiter.
const standard = new aws.RetryConfig({ mode: 'adaptive', behavior: '2026', max_attempts: 4, service: 'dynamodb' })
const quota = new RetryBudget({ kind: 'retry_quota', costs: '2026' })
let decision: AwsDecision = aws.decide(standard, 1, { code: 'ThrottlingException', status: 400 }, { random: Math.random() })
if (decision.action === 'retry' && decision.cause !== null) {
  const verdict = quota.tryRetry(Date.now(), decision.cause)
  if (!verdict.permitted) decision = aws.decide(standard, 1, { code: 'ThrottlingException', status: 400 }, { random: 0.5, budgetVerdict: verdict })
}
console.log(decision.delayMs, decision.waitMs, standard.maxAttempts, aws.decide(null, 1, { connectionError: true }, { random: 0.1 }).rule)
const limiter = new aws.AdaptiveRateLimiter(null, Date.now())
const gate = limiter.acquire(Date.now())
if (!gate.acquired) console.log(gate.waitMs)
const update = limiter.record(Date.now(), decision.throttling)
const saved: RateLimiterSnapshot = limiter.snapshot()
const again: aws.AdaptiveRateLimiter = aws.AdaptiveRateLimiter.restore(limiter.toJSON(), JSON.stringify(saved))
console.log(update.fillRate, again.snapshot().enabled)

// A run with gRPC rules (gRPC's own JSON for the policy) and one with AWS rules (the quota is its budget).
const grpcRun = new Run({ rules: { grpc: { retryPolicy: { maxAttempts: 3, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] } } }, timeoutMs: 10_000 })
grpcRun.start(0)
const waited = grpcRun.attemptEnded({ kind: 'grpc', status: 'UNAVAILABLE', pushback: ['100'] }, 5)
const awsRun = new Run({ rules: { aws: { config: standard } } }, { budget: quota })
awsRun.start(0)
console.log(waited.delayMs, awsRun.attemptEnded({ kind: 'aws', error: { status: 503 } }, 5, 0.5).decision)

// @ts-expect-error: gRPC's documents are its own camelCase JSON (maxAttempts), not snake_case
new grpc.RetryPolicy({ max_attempts: 3, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] })
// @ts-expect-error: a duration is proto3 JSON's text with its unit ("0.1s"), not a number
new grpc.HedgingPolicy({ maxAttempts: 3, hedgingDelay: 500 })
// @ts-expect-error: a status code is one of gRPC's seventeen names (or a number)
grpc.retry(null, { attempts: 1 }, { status: 'TIMEOUT' })
// @ts-expect-error: grpc.retry takes a RetryPolicy, not a HedgingPolicy
grpc.retry(hedging, { attempts: 1 }, { status: 'UNAVAILABLE' })
// @ts-expect-error: the throttling bucket is a RetryBudget, not its document
grpc.retry(typed, { attempts: 1 }, { status: 'UNAVAILABLE' }, { throttling: { kind: 'token_bucket' } })
// @ts-expect-error: hedging events are start, hedge_due, committed and attempt_ended (with its attempt)
grpc.hedge(hedging, null, 'attempt_ended')
// @ts-expect-error: an AWS retry document is the shared snake_case form (max_attempts)
new aws.RetryConfig({ maxAttempts: 3 })
// @ts-expect-error: the mode is standard, adaptive or legacy
new aws.RetryConfig({ mode: 'fast' })
// @ts-expect-error: an attempt's error is camelCase (connectionError)
aws.decide(null, 1, { connection_error: true })
// @ts-expect-error: record says whether the response was throttled
limiter.record(Date.now())
// @ts-expect-error: a run's gRPC outcome names its status
awsRun.attemptEnded({ kind: 'grpc', pushback: ['5'] }, 1)
