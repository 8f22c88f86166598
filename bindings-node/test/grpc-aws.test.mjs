// The typed gRPC (gRFC A6) and AWS retry-mode API: the numbers of A6's text and the SDKs' rules
// worked out by hand in the comments, the lent throttling bucket and quota, read-only results,
// errors naming the field, a run with `grpc` and `aws` rules, and the README's example as written.
// Binding-agnostic (./binding.mjs): the wasm package runs it too.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import rp, { which } from './binding.mjs'

const { grpc, aws, RetryBudget, Run } = rp

/** A6's example policy: 4 attempts, backoff bound 100 ms doubling up to 1 s, UNAVAILABLE retried. */
const A6 = { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] }

/** The error `f` throws: `[code, field]`. */
function thrown(f) {
  try {
    f()
  } catch (e) {
    assert.ok(rp.isRetryPolicyError(e), `not a retrypolicy error: ${e}`)
    return [e.code, e.field]
  }
  return ['no error']
}

test('a service config gives each method its policy, exact method first, with typed read-only fields', () => {
  const config = new grpc.ServiceConfig({
    loadBalancingPolicy: 'round_robin', // not A6's: ignored
    methodConfig: [
      { name: [{}], hedgingPolicy: { maxAttempts: 2 } },
      { name: [{ service: 'svc' }], retryPolicy: { ...A6, maxAttempts: 9 } },
      { name: [{ service: 'svc', method: 'Hedged' }], hedgingPolicy: { maxAttempts: 3, hedgingDelay: '0.25s', nonFatalStatusCodes: [14, 'internal'] } },
    ],
  })
  assert.equal(config.throttling, null)
  assert.deepEqual([config.matched('svc', 'Hedged'), config.matched('svc', 'Other'), config.matched('other'), config.matched('')], ['exact', 'service', 'default', 'default'])
  const retry = config.policyFor('svc', 'Get')
  assert.ok(retry instanceof grpc.RetryPolicy)
  // maxAttempts 9 is capped at A6's client default of 5; durations in ns.
  assert.deepEqual({ ...retry }, { kind: 'retry', maxAttempts: 5, initialBackoffNs: 100_000_000, maxBackoffNs: 1_000_000_000, backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] })
  const hedged = config.policyFor('svc', 'Hedged')
  assert.ok(hedged instanceof grpc.HedgingPolicy)
  // Codes are named and ordered by number: INTERNAL (13) before UNAVAILABLE (14).
  assert.deepEqual({ ...hedged }, { kind: 'hedging', maxAttempts: 3, hedgingDelayNs: 250_000_000, nonFatalStatusCodes: ['INTERNAL', 'UNAVAILABLE'] })
  assert.ok(Object.isFrozen(retry) && Object.isFrozen(hedged) && Object.isFrozen(config))
  assert.throws(() => { retry.maxAttempts = 7 }, TypeError)
  assert.equal(JSON.stringify(hedged), '{"kind":"hedging","max_attempts":3,"hedging_delay_ns":250000000,"non_fatal_status_codes":["INTERNAL","UNAVAILABLE"]}')
  // Raising the client's cap lets 9 attempts through; no method config and no default: no policy.
  assert.equal(new grpc.ServiceConfig({ methodConfig: [{ name: [{ service: 'svc' }], retryPolicy: { ...A6, maxAttempts: 9 } }] }, { maxAttemptsCap: 10 }).policyFor('svc').maxAttempts, 9)
  assert.equal(new grpc.ServiceConfig('{}').policyFor('svc', 'Get'), null)
  // proto3's longest duration (315,576,000,000 s) is past 2^64 - 1 ns: read as that, a bigint here.
  assert.equal(new grpc.RetryPolicy({ ...A6, maxBackoff: '315576000000s' }).maxBackoffNs, 18446744073709551615n)
})

test('A6 decisions chain through `next`: backoff, pushback resetting it, then max attempts', () => {
  const policy = new grpc.RetryPolicy(A6)
  const unavailable = { status: 'UNAVAILABLE' }
  // Attempt 1 failed: A6's default jitter, 100 ms x (0.8 + 0.4 x 0.5) = 100 ms.
  const first = grpc.retry(policy, { attempts: 1 }, unavailable, { random: 0.5 })
  assert.deepEqual([first.action, first.delayMs, first.rule, first.transparent, first.throttle], ['retry', 100, 'exponential_backoff', false, 'failure'])
  assert.deepEqual({ ...first.next }, { attempts: 2, retries: 1, retriesSincePushback: 1, elapsedMs: 0, deadlineMs: null })
  // Attempt 2: the bound doubled to 200 ms; x (0.8 + 0.4 x 0.5) = 200 ms; the older text's full draw: 0.5 of it, 100 ms.
  const second = grpc.retry(policy, first.next, unavailable, { random: 0.5 })
  assert.equal(second.delayMs, 200)
  assert.equal(grpc.retry(policy, first.next, unavailable, { random: 0.5, jitter: 'full' }).delayMs, 100)
  // Attempt 3 with pushback 250: exactly 250 ms, and the exponent starts over.
  const third = grpc.retry(policy, second.next, { ...unavailable, pushback: ['250'] }, { random: 0.5 })
  assert.deepEqual([third.delayMs, third.pushbackMs, third.rule, third.next.retriesSincePushback], [250, 250, 'pushback', 0])
  // Attempt 4 of 4: no retry, whatever the draw.
  assert.deepEqual([grpc.retry(policy, third.next, unavailable, { random: 0.5 }).action, grpc.retry(policy, third.next, unavailable, { random: 0.5 }).rule], ['fail', 'max_attempts_reached'])
  // The ±20 % named: 100 ms x (0.8 + 0.4 x 0) = 80 ms.
  assert.equal(grpc.retry(policy, { attempts: 1 }, unavailable, { random: 0, jitter: 'plus_minus_20_percent' }).delayMs, 80)
  // No policy: only a transparent retry (never sent) goes, at once, and is not counted.
  const transparent = grpc.retry(null, { attempts: 1 }, { status: 14, reach: 'never_sent' })
  assert.deepEqual([transparent.action, transparent.delayMs, transparent.transparent, transparent.next.attempts], ['retry', 0, true, 1])
  assert.equal(grpc.retry(null, { attempts: 1 }, unavailable).rule, 'no_retry_policy')
  assert.ok(Object.isFrozen(first) && Object.isFrozen(first.next))
})

test('the throttling bucket is a RetryBudget lent to each call: failures take a token, OK adds tokenRatio', () => {
  const config = new grpc.ServiceConfig({ methodConfig: [{ name: [{ service: 'svc' }], retryPolicy: A6 }], retryThrottling: { maxTokens: 10, tokenRatio: 0.1 } })
  assert.deepEqual(config.throttling, { version: 1, kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 })
  const bucket = new RetryBudget(config.throttling)
  const policy = config.policyFor('svc')
  // 10 tokens: failures leave 9, 8, 7, 6 (above half: retried); the fifth leaves 5 (at half: refused).
  const rules = []
  for (let i = 0; i < 5; i++) rules.push(grpc.retry(policy, { attempts: 1 }, { status: 'UNAVAILABLE' }, { random: 0.5, throttling: bucket, nowMs: i }).rule)
  assert.deepEqual(rules, ['exponential_backoff', 'exponential_backoff', 'exponential_backoff', 'exponential_backoff', 'token_bucket_at_or_below_half'])
  assert.equal(bucket.snapshot().balance, 5000)
  // OK: + 0.1 token (thousandths). A status the policy does not retry tells the bucket nothing.
  assert.equal(grpc.retry(policy, { attempts: 1 }, { status: 'OK' }, { throttling: bucket }).throttle, 'success')
  assert.equal(grpc.retry(policy, { attempts: 1 }, { status: 'INTERNAL' }, { throttling: bucket }).throttle, null)
  assert.equal(bucket.snapshot().balance, 5100)
  // A hedge is asked of the same bucket: at 5.1 tokens (above half) the first hedge goes.
  const hedging = new grpc.HedgingPolicy({ maxAttempts: 3, hedgingDelay: '0.5s' })
  const start = grpc.hedge(hedging, null, 'start', { throttling: bucket })
  const due = grpc.hedge(hedging, start.state, 'hedge_due', { throttling: bucket })
  assert.deepEqual([start.send, start.nextHedgeInMs, due.send, due.budget.permitted], [1, 500, 1, true])
})

test('a hedged call: every hedgingDelay a copy, a non-fatal status sends the next at once, OK cancels the rest', () => {
  const policy = new grpc.HedgingPolicy({ maxAttempts: 4, hedgingDelay: '0.5s', nonFatalStatusCodes: ['UNAVAILABLE'] })
  const events = ['start', { event: 'hedge_due' }, { event: 'attempt_ended', attempt: { status: 'UNAVAILABLE' } },
    { event: 'attempt_ended', attempt: { status: 'OK' } }]
  let state = null
  const steps = events.map((e) => {
    const step = grpc.hedge(policy, state, e)
    state = step.state
    return step
  })
  assert.deepEqual(steps.map((s) => [s.send, s.rule]), [[1, 'original_attempt'], [1, 'hedging_delay_over'], [1, 'non_fatal_status'], [0, 'ok']])
  assert.deepEqual([steps[3].end, steps[3].cancelOthers, state.done], ['succeeded', true, true])
  // hedgingDelay 0s: every attempt at once.
  assert.equal(grpc.hedge(new grpc.HedgingPolicy({ maxAttempts: 3 }), null, 'start').send, 3)
})

test('gRPC errors name the field, camelCase, and a wrong object is refused by name', () => {
  const policy = new grpc.RetryPolicy(A6)
  assert.deepEqual(thrown(() => new grpc.ServiceConfig({ methodConfig: [{ name: [{ service: 's' }], retryPolicy: { ...A6, maxAttempts: 1 } }] })), ['out_of_range', 'methodConfig[0].retryPolicy.maxAttempts'])
  assert.deepEqual(thrown(() => new grpc.RetryPolicy({ ...A6, initialBackoff: '100ms' })), ['out_of_range', 'retryPolicy.initialBackoff'])
  assert.deepEqual(thrown(() => new grpc.RetryPolicy({ ...A6, retryableStatusCodes: [17] })), ['out_of_range', 'retryPolicy.retryableStatusCodes[0]'])
  assert.deepEqual(thrown(() => new grpc.HedgingPolicy({ maxAttempts: 2, hedgingDelay: '-1s' })), ['out_of_range', 'hedgingPolicy.hedgingDelay'])
  assert.deepEqual(thrown(() => new grpc.RetryPolicy(A6, { maxAttemptsCap: 1 })), ['out_of_range', 'maxAttemptsCap'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 0 }, { status: 'UNAVAILABLE' }, { random: 0.5 })), ['out_of_range', 'state.attempts'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1, deadlineMs: -1 }, { status: 'UNAVAILABLE' })), ['invalid_duration', 'state.deadlineMs'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1, retries_since_pushback: 0 }, { status: 'UNAVAILABLE' })), ['unknown_field', 'state.retries_since_pushback'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1 }, { status: 'TIMEOUT' })), ['out_of_range', 'attempt.status'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1 }, { status: 'UNAVAILABLE' })), ['missing_field', 'random'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1 }, { status: 'UNAVAILABLE' }, { random: 1 })), ['invalid_random', 'random'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1 }, { status: 'OK' }, { jitter: 'half' })), ['unknown_name', 'jitter'])
  assert.deepEqual(thrown(() => grpc.retry(policy, { attempts: 1 }, { status: 'OK' }, { throttling: { kind: 'token_bucket' } })), ['invalid_type', 'throttling'])
  assert.deepEqual(thrown(() => grpc.retry(new grpc.HedgingPolicy({ maxAttempts: 2 }), { attempts: 1 }, { status: 'OK' })), ['invalid_type', 'policy'])
  assert.deepEqual(thrown(() => grpc.retry(policy, null, { status: 'OK' })), ['invalid_type', 'state'])
  const hedging = new grpc.HedgingPolicy({ maxAttempts: 2 })
  assert.deepEqual(thrown(() => grpc.hedge(hedging, null, { event: 'attempt_ended' })), ['missing_field', 'event.attempt'])
  assert.deepEqual(thrown(() => grpc.hedge(hedging, null, 'begin')), ['unknown_name', 'event.event'])
  // An attempt's end before the call started.
  assert.deepEqual(thrown(() => grpc.hedge(hedging, null, { event: 'attempt_ended', attempt: { status: 'OK' } })), ['out_of_range', 'event'])
  assert.deepEqual(thrown(() => grpc.hedge(null, null, 'start')), ['invalid_type', 'policy'])
})

test('AWS standard mode: the decision, the quota asked with its cause and refunded on success', () => {
  const config = new aws.RetryConfig()
  assert.deepEqual({ ...config }, { mode: 'standard', behavior: 'classic', maxAttempts: 3, service: null, maxBackoffMs: 20_000, longPolling: false })
  assert.ok(Object.isFrozen(config))
  const quota = new RetryBudget({ kind: 'retry_quota' })
  // A 503 on attempt 1: transient; floor(0.5 x min(1 s x 2^0, 20 s)) = 500 ms; the quota's 500 tokens pay 5.
  const d = aws.decide(config, 1, { status: 503 }, { random: 0.5 })
  assert.deepEqual([d.action, d.delayMs, d.ceilingMs, d.rule, d.cause, d.retryable, d.throttling], ['retry', 500, 1000, 'transient_status', 'error', true, false])
  assert.equal(quota.tryRetry(0, d.cause).balance, 495)
  // A ThrottlingException on attempt 2: 0.5 x 2 s; the classic cost of a throttling retry is 5 too.
  const t = aws.decide(config, 2, { status: 400, code: 'ThrottlingException' }, { random: 0.5 })
  assert.deepEqual([t.delayMs, t.rule, t.cause, t.throttling], [1000, 'throttling_error_code', 'throttling', true])
  assert.equal(quota.tryRetry(0, t.cause).balance, 490)
  // The success refunds the last retry's cost; a first attempt's success adds 1 (afterRetry null: none).
  quota.record(0, { kind: 'success', afterRetry: t.cause })
  quota.record(0, { kind: 'success', afterRetry: null })
  assert.equal(quota.permit(0).balance, 496)
  // Attempt 3 of 3: no retry. A 400 ValidationException is not retryable.
  assert.deepEqual([aws.decide(config, 3, { status: 503 }, { random: 0.5 }).rule, aws.decide(config, 1, { status: 400, code: 'ValidationException' }).rule], ['max_attempts_reached', 'not_retryable'])
})

test('AWS: a refused quota turns the retry into a no-retry with its rule; documents, 2026 and legacy', () => {
  const quota = RetryBudget.restore({ kind: 'retry_quota' }, { kind: 'retry_quota', balance: 4 })
  const error = { connectionError: true }
  const d = aws.decide(null, 1, error, { random: 0.5 })
  const verdict = quota.tryRetry(0, d.cause)
  assert.equal(verdict.permitted, false)
  const refused = aws.decide(null, 1, error, { random: 0.5, budgetVerdict: verdict })
  assert.deepEqual([refused.action, refused.rule, refused.delayMs], ['no_retry', 'retry_quota_exhausted', null])
  // A document is checked and used as a RetryConfig would be: 2026's 50 ms base, 0.5 of it.
  assert.equal(aws.decide({ behavior: '2026' }, 1, { status: 500 }, { random: 0.5 }).delayMs, 25)
  // 2026, DynamoDB: 4 attempts by default and a 25 ms base.
  const dynamo = new aws.RetryConfig({ behavior: '2026', service: 'dynamodb' })
  assert.deepEqual([dynamo.maxAttempts, aws.decide(dynamo, 1, { status: 500 }, { random: 0.5 }).ceilingMs], [4, 25])
  // Legacy mode: 5 attempts, no behaviour or backoff cap.
  const legacy = new aws.RetryConfig({ mode: 'legacy' })
  assert.deepEqual([legacy.maxAttempts, legacy.behavior, legacy.maxBackoffMs, legacy.longPolling], [5, null, null, null])
  assert.deepEqual(legacy.toJSON(), { version: 1, mode: 'legacy', max_attempts: 5 })
})

test('AWS errors name the field: the document in its snake_case, the call in camelCase', () => {
  assert.deepEqual(thrown(() => new aws.RetryConfig({ max_attempts: 0 })), ['out_of_range', 'config.max_attempts'])
  assert.deepEqual(thrown(() => new aws.RetryConfig({ mode: 'fast' })), ['unknown_name', 'config.mode'])
  assert.deepEqual(thrown(() => new aws.RetryConfig({ mode: 'legacy', long_polling: true })), ['unknown_field', 'config.long_polling'])
  assert.deepEqual(thrown(() => aws.decide(null, 0, { status: 500 }, { random: 0.5 })), ['out_of_range', 'attempts'])
  assert.deepEqual(thrown(() => aws.decide(null, 1.5, { status: 500 }, { random: 0.5 })), ['out_of_range', 'attempts'])
  assert.deepEqual(thrown(() => aws.decide(null, 1, { status: 500, connectionError: true }, { random: 0.5 })), ['invalid_type', 'error.status'])
  assert.deepEqual(thrown(() => aws.decide(null, 1, { status: 500, headers: {} }, { random: 0.5 })), ['unknown_field', 'error.headers'])
  assert.deepEqual(thrown(() => aws.decide(null, 1, { status: 400, retryableTrait: 'transient' }, { random: 0.5 })), ['missing_field', 'error.code'])
  assert.deepEqual(thrown(() => aws.decide(null, 1, { status: 500 })), ['missing_field', 'random'])
  assert.deepEqual(thrown(() => aws.decide(null, 1, { status: 500 }, { random: 0.5, budgetVerdict: { permitted: true, rule: 'retry_quota_exhausted' } })), ['out_of_range', 'budgetVerdict.permitted'])
  assert.deepEqual(thrown(() => aws.decide(null, 1, 503)), ['invalid_type', 'error'])
})

test('the adaptive limiter: off until throttled, then the minimum rate; snapshots restore it exactly', () => {
  const limiter = new aws.AdaptiveRateLimiter(null, 0)
  // Off: every attempt goes.
  assert.deepEqual([limiter.acquire(0).acquired, limiter.acquire(0).rule], [true, 'limiter_off'])
  // A throttled response with nothing measured yet: β × 0, capped at 2 × 0, is raised to the
  // 0.5 tokens/s minimum.
  const update = limiter.record(0, true)
  assert.deepEqual([update.enabled, update.fillRate, update.maxCapacity], [true, 0.5, 1])
  assert.deepEqual([update.rule, update.bound], ['throttle_beta', 'raised_to_min_fill_rate'])
  // No token yet: one token at 0.5/s takes 2000 ms; then it is there.
  const wait = limiter.acquire(0)
  assert.deepEqual([wait.acquired, wait.waitMs, wait.rule], [false, 2000, 'wait_for_token'])
  const saved = limiter.snapshot()
  assert.deepEqual([saved.version, saved.enabled, saved.fill_rate, saved.capacity], [1, true, 0.5, 0])
  const twin = aws.AdaptiveRateLimiter.restore(limiter.toJSON(), JSON.stringify(saved))
  assert.deepEqual(twin.acquire(2000), limiter.acquire(2000))
  assert.equal(limiter.acquire(2000).rule, 'wait_for_token')
  assert.deepEqual(limiter.toJSON(), { version: 1, min_fill_rate: 0.5, beta: 0.7, scale_constant: 0.4, smoothing: 0.8 })
  assert.deepEqual(thrown(() => limiter.record(1)), ['missing_field', 'throttled'])
  assert.deepEqual(thrown(() => limiter.acquire(-1)), ['invalid_duration', 'nowMs'])
  assert.deepEqual(thrown(() => aws.AdaptiveRateLimiter.restore(null, null)), ['missing_field', 'state'])
  assert.deepEqual(thrown(() => aws.AdaptiveRateLimiter.restore(null, { ...saved, capacity: 2 })), ['out_of_range', 'state.capacity'])
  assert.deepEqual(thrown(() => new aws.AdaptiveRateLimiter({ beta: 1 })), ['out_of_range', 'limiter.beta'])
})

test('a Run takes grpc and aws rules and outcomes; its steps carry the typed decision', () => {
  const run = new Run({ rules: { grpc: { retryPolicy: A6 } }, timeoutMs: 10_000 })
  assert.equal(run.start(0).action, 'send')
  // UNAVAILABLE, draw 0.5: 100 ms x (0.8 + 0.4 x 0.5) = 100 ms (A6's default jitter); with pushback 250: 250 ms; then OK.
  const wait = run.attemptEnded({ kind: 'grpc', status: 'UNAVAILABLE' }, 5, 0.5)
  assert.deepEqual([wait.action, wait.delayMs, wait.decision.rule, wait.decision.next.retriesSincePushback], ['wait', 100, 'exponential_backoff', 1])
  run.waitEnded(105)
  assert.equal(run.attemptEnded({ kind: 'grpc', status: 14, pushback: ['250'] }, 110).delayMs, 250)
  run.waitEnded(360)
  assert.deepEqual([run.attemptEnded({ kind: 'grpc', status: 'OK' }, 370).end, run.attemptsSent], ['succeeded', 3])
  // AWS rules with an aws.RetryConfig; the run's budget is the retry quota.
  const quota = new RetryBudget({ kind: 'retry_quota' })
  const awsRun = new Run({ rules: { aws: { config: new aws.RetryConfig({ max_attempts: 2 }) } } }, { budget: quota })
  awsRun.start(0)
  const retried = awsRun.attemptEnded({ kind: 'aws', error: { status: 503 } }, 1, 0.5)
  assert.deepEqual([retried.delayMs, retried.decision.rule, retried.decision.cause, quota.permit(0).balance], [500, 'transient_status', 'error', 495])
  awsRun.waitEnded(501)
  assert.deepEqual([awsRun.attemptEnded({ kind: 'aws', error: { connectionError: true } }, 502, 0.5).decision.rule], ['max_attempts_reached'])
  // Its errors name the field: the documents' own, the outcomes' camelCase.
  assert.deepEqual(thrown(() => new Run({ rules: { aws: { config: { max_attempts: 0 } } } })), ['out_of_range', 'rules.aws.config.max_attempts'])
  assert.deepEqual(thrown(() => new Run({ rules: { grpc: { retryPolicy: { ...A6, maxAttempts: 1 } } } })), ['out_of_range', 'rules.grpc.retryPolicy.maxAttempts'])
  assert.deepEqual(thrown(() => new Run({ rules: { grpc: { retryPolicy: new grpc.RetryPolicy(A6) } } })), ['invalid_type', 'rules.grpc.retryPolicy'])
  const other = new Run({ rules: { grpc: {} }, timeoutMs: 1000 })
  other.start(0)
  assert.deepEqual(thrown(() => other.attemptEnded({ kind: 'grpc', status: 'UNAVAILABLE', headers: {} }, 1)), ['unknown_field', 'outcome.headers'])
  assert.deepEqual(thrown(() => other.attemptEnded({ kind: 'grpc', status: 'NOPE' }, 1)), ['out_of_range', 'outcome.status'])
  assert.deepEqual(thrown(() => other.attemptEnded({ kind: 'aws' }, 1)), ['missing_field', 'outcome.error'])
  assert.deepEqual(thrown(() => other.attemptEnded({ kind: 'aws', error: { status: 503 } }, 1)), ['out_of_range', 'outcome.kind'])
})

test('the README\'s "gRPC and AWS" example runs as written and prints what it shows', { skip: which !== 'native' && 'the README documents the native package' }, () => {
  const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const section = readme.split('## gRPC and AWS')[1]
  const [, code, printed] = section.match(/```js\n([^]*?)```\nprints\n```\n([^]*?)```/)
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(r.stdout, printed)
  // The numbers it shows, by hand: 100 ms x (0.8 + 0.4 x 0.5) = 100 ms; pushback 250; 10 - 2 + 0.1 tokens; 0.5 x 1 s, 0.5 x 2 s;
  // 500 - 5 - 5 + 5; one token at 0.5/s.
  assert.equal(printed, 'retry 100 exponential_backoff\nretry 250 pushback\nsucceeded null ok\nbucket 8100\nretry 500 transient_status 495\n' +
    'retry 1000 throttling_error_code 490\nquota 495\nwait_for_token 2000 token_taken\n')
})
