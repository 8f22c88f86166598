// Bad input raises a typed error naming the field: napi would silently turn -1 into 4294967295
// and 1.7 into 1, so every number is checked. Each case: a call, the code, the field.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import fs from 'node:fs'
import rp, { which } from './binding.mjs'

const base = { service: 'kv', operation: 'get', attempts: 1, elapsedMs: 10, timeoutMs: 2500 }
const req = (changes) => ({ ...base, ...changes })

function rejects(fn, code, field) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`)
    assert.ok(rp.isRetryPolicyError(e), `not a retrypolicy error: ${e && e.stack}`)
    assert.equal(e.code, code, e.message)
    assert.equal(e.field, field, e.message)
    return true
  })
}

/** A run started at 0, its first attempt out. */
function started(rules) {
  const run = new rp.Run({ rules, timeoutMs: 10000 })
  run.start(0)
  return run
}
const httpRun = () => started({ http: { method: 'GET' } })
const awsRun = () => started({ aws: {} })

const CASES = [
  // durations: negative, fractional, NaN, infinite, past 2^53 − 1, strings, wrong types
  ['elapsedMs -1', () => rp.decide(req({ elapsedMs: -1 }), 'KV_LOCKED'), 'invalid_duration', 'elapsedMs'],
  ['elapsedMs 1.7', () => rp.decide(req({ elapsedMs: 1.7 }), 'KV_LOCKED'), 'invalid_duration', 'elapsedMs'],
  ['timeoutMs NaN', () => rp.decide(req({ timeoutMs: NaN }), 'KV_LOCKED'), 'invalid_duration', 'timeoutMs'],
  ['timeoutMs Infinity', () => rp.decide(req({ timeoutMs: Infinity }), 'KV_LOCKED'), 'invalid_duration', 'timeoutMs'],
  ['timeoutMs 2^53', () => rp.decide(req({ timeoutMs: 2 ** 53 }), 'KV_LOCKED'), 'invalid_duration', 'timeoutMs'],
  ['timeoutMs "2500"', () => rp.decide(req({ timeoutMs: '2500' }), 'KV_LOCKED'), 'invalid_duration', 'timeoutMs'],
  ['timeoutMs missing', () => rp.decide(req({ timeoutMs: undefined }), 'KV_LOCKED'), 'missing_field', 'timeoutMs'],
  ['timeoutMs -1n', () => rp.decide(req({ timeoutMs: -1n }), 'KV_LOCKED'), 'invalid_duration', 'timeoutMs'],
  ['timeoutMs 2^64', () => rp.decide(req({ timeoutMs: 2n ** 64n }), 'KV_LOCKED'), 'invalid_duration', 'timeoutMs'],
  ['previousDelayMs -5', () => rp.decide(req({ previousDelayMs: -5 }), 'KV_LOCKED'), 'invalid_duration', 'previousDelayMs'],
  // a value of another type is invalid_type, as in JSON (the differential test found a clock's null
  // answered invalid_duration, where the JSON API's `at_ms: null` is invalid_type)
  ['previousDelayMs {}', () => rp.decide(req({ previousDelayMs: {} }), 'KV_LOCKED'), 'invalid_type', 'previousDelayMs'],
  ['timeoutMs true', () => rp.decide(req({ timeoutMs: true }), 'KV_LOCKED'), 'invalid_type', 'timeoutMs'],
  ['budget nowMs null', () => new rp.RetryBudget({ kind: 'retry_quota' }).permit(null), 'invalid_type', 'nowMs'],
  ['budget nowMs "x"', () => new rp.RetryBudget({ kind: 'retry_quota' }).permit('x'), 'invalid_duration', 'nowMs'],
  ['limiter nowMs null', () => new rp.aws.AdaptiveRateLimiter().acquire(null), 'invalid_type', 'nowMs'],
  ['limiter nowMs {}', () => new rp.aws.AdaptiveRateLimiter().record({}, true), 'invalid_type', 'nowMs'],
  // an outcome's property its kind does not have is unknown_field, as in JSON (the differential
  // test found it ignored)
  ['outcome.readonly', () => httpRun().attemptEnded({ kind: 'http', status: 200, readonly: false }, 5), 'unknown_field', 'outcome.readonly'],
  ['outcome.status of success', () => httpRun().attemptEnded({ kind: 'success', status: 200 }, 5), 'unknown_field', 'outcome.status'],
  // a key a hedged attempt does not have is named inside it (the differential test found event.(document))
  ['hedge attempt.random', () => rp.grpc.hedge(new rp.grpc.HedgingPolicy({ maxAttempts: 2 }), null,
    { event: 'attempt_ended', attempt: { status: 14, random: 1 } }), 'unknown_field', 'event.attempt.random'],
  // an unknown outcome kind is unknown_name, a property the kind needs left out missing_field, as
  // in JSON (the differential test found out_of_range and invalid_type)
  ['outcome.kind nope', () => httpRun().attemptEnded({ kind: 'nope' }, 5), 'unknown_name', 'outcome.kind'],
  ['outcome.kind left out', () => httpRun().attemptEnded({}, 5), 'missing_field', 'outcome.kind'],
  ['outcome.reason left out', () => httpRun().attemptEnded({ kind: 'reason' }, 5), 'missing_field', 'outcome.reason'],
  ['outcome.status left out', () => httpRun().attemptEnded({ kind: 'http' }, 5), 'missing_field', 'outcome.status'],
  ['outcome.extra of aws', () => awsRun().attemptEnded({ kind: 'aws', error: { status: 500 }, extra: 1 }, 5), 'unknown_field', 'outcome.extra'],
  // a value is named inside the outcome, and inside an outcome's error document
  ['outcome.status NaN', () => httpRun().attemptEnded({ kind: 'http', status: NaN }, 5), 'out_of_range', 'outcome.status'],
  ['outcome.reason a number', () => httpRun().attemptEnded({ kind: 'reason', reason: 5 }, 5), 'invalid_type', 'outcome.reason'],
  ['outcome.error.bogus of aws', () => awsRun().attemptEnded({ kind: 'aws', error: { status: 500, bogus: 1 } }, 5), 'unknown_field', 'outcome.error.bogus'],
  // counts
  ['attempts -1', () => rp.decide(req({ attempts: -1 }), 'KV_LOCKED'), 'out_of_range', 'attempts'],
  ['attempts 1.7', () => rp.decide(req({ attempts: 1.7 }), 'KV_LOCKED'), 'out_of_range', 'attempts'],
  ['attempts NaN', () => rp.decide(req({ attempts: NaN }), 'KV_LOCKED'), 'out_of_range', 'attempts'],
  ['attempts 2^32', () => rp.decide(req({ attempts: 2 ** 32 }), 'KV_LOCKED'), 'out_of_range', 'attempts'],
  ['attempts "3"', () => rp.decide(req({ attempts: '3' }), 'KV_LOCKED'), 'invalid_type', 'attempts'],
  // draws
  ['random 1', () => rp.decide(req({ random: 1 }), 'KV_LOCKED'), 'invalid_random', 'random'],
  ['random -0.1', () => rp.decide(req({ random: -0.1 }), 'KV_LOCKED'), 'invalid_random', 'random'],
  ['random NaN', () => rp.decide(req({ random: NaN }), 'KV_LOCKED'), 'invalid_random', 'random'],
  ['random "0.5"', () => rp.decide(req({ random: '0.5' }), 'KV_LOCKED'), 'invalid_type', 'random'],
  ['jitter without a draw', () => rp.decide(req({}), 'KV_LOCKED', new rp.Policy({ jitter: 'full' })), 'missing_field', 'random'],
  // names
  ['unknown reason', () => rp.decide(req({}), 'KV_LOCKEDX'), 'unknown_reason', 'reason'],
  ['lowercase reason', () => rp.decide(req({}), 'kv_locked'), 'unknown_reason', 'reason'],
  ['reason as a number', () => rp.decide(req({}), 7), 'invalid_type', 'reason'],
  ['unknown previous reason', () => rp.decide(req({ previousReasons: ['KV_LOCKED', 'NOPE'] }), 'KV_LOCKED'), 'unknown_reason', 'previousReasons[1]'],
  ['previousReasons not an array', () => rp.decide(req({ previousReasons: 'KV_LOCKED' }), 'KV_LOCKED'), 'invalid_type', 'previousReasons'],
  ['unknown service', () => rp.decide(req({ service: 'eventing' }), 'KV_LOCKED'), 'unknown_name', 'service'],
  ['missing service', () => rp.decide(req({ service: undefined }), 'KV_LOCKED'), 'missing_field', 'service'],
  ['unknown KV operation', () => rp.decide(req({ operation: 'frobnicate' }), 'KV_LOCKED'), 'unknown_name', 'operation'],
  ['misplaced readonly', () => rp.decide(req({ readonly: true }), 'KV_LOCKED'), 'unknown_field', 'readonly'],
  ['readonly "yes"', () => rp.decide({ service: 'query', readonly: 'yes', timeoutMs: 1 }, 'KV_LOCKED'), 'invalid_type', 'readonly'],
  ['unknown method', () => rp.decide({ service: 'management', method: 'get', timeoutMs: 1 }, 'KV_LOCKED'), 'unknown_name', 'method'],
  ['unknown strategy', () => rp.decide(req({ strategy: 'yolo' }), 'KV_LOCKED'), 'unknown_name', 'strategy'],
  ['idempotent "yes"', () => rp.decide(req({ idempotent: 'yes' }), 'KV_LOCKED'), 'invalid_type', 'idempotent'],
  ['request not an object', () => rp.decide('get', 'KV_LOCKED'), 'invalid_type', 'request'],
  ['policy not a Policy', () => rp.decide(req({}), 'KV_LOCKED', { jitter: 'full' }), 'invalid_type', 'policy'],
  ['strategy not callable', () => rp.decide(req({}), 'KV_LOCKED', undefined, 5), 'invalid_type', 'strategy'],
  ['strategy answers -1', () => rp.decide(req({}), 'KV_LOCKED', undefined, () => -1), 'invalid_duration', 'retryAfter'],
  ['strategy answers 1.5', () => rp.decide(req({}), 'KV_LOCKED', undefined, () => 1.5), 'invalid_duration', 'retryAfter'],
  ['strategy answers "soon"', () => rp.decide(req({}), 'KV_LOCKED', undefined, () => 'soon'), 'invalid_duration', 'retryAfter'],
  // classification
  ['status -1', () => rp.classifyKv('get', -1), 'out_of_range', 'status'],
  ['status 1.7', () => rp.classifyKv('get', 1.7), 'out_of_range', 'status'],
  ['status 70000', () => rp.classifyKv('get', 70000), 'out_of_range', 'status'],
  ['status "0xzz"', () => rp.classifyKv('get', '0xzz'), 'out_of_range', 'status'],
  ['status "7"', () => rp.classifyKv('get', '7'), 'out_of_range', 'status'],
  ['KV operation "getx"', () => rp.classifyKv('getx', 7), 'unknown_name', 'operation'],
  ['error map not JSON', () => rp.classifyKv('get', 0xff01, { errorMap: '{' }), 'malformed_json', ''],
  ['query code -1', () => rp.classifyQuery(-1, ''), 'out_of_range', 'code'],
  ['query code NaN', () => rp.classifyQuery(NaN, ''), 'out_of_range', 'code'],
  ['query code "4040"', () => rp.classifyQuery('4040', ''), 'invalid_type', 'code'],
  ['query message 5', () => rp.classifyQuery(4040, 5), 'invalid_type', 'message'],
  ['query retry flag "yes"', () => rp.classifyQuery(4040, '', { retry: 'yes' }), 'invalid_type', 'retry'],
  ['analytics code 2^32', () => rp.classifyAnalytics(2 ** 32), 'out_of_range', 'code'],
  ['search status 100000', () => rp.classifySearch(100000), 'out_of_range', 'httpStatus'],
  ['views status 1.5', () => rp.classifyViews(1.5, ''), 'out_of_range', 'httpStatus'],
  ['views body {}', () => rp.classifyViews(404, {}), 'invalid_type', 'body'],
  ['dispatch "cosmic_ray"', () => rp.classifyDispatch('cosmic_ray'), 'unknown_name', 'failure'],
  // backoff
  ['controlled attempt -1', () => rp.controlledBackoffMs(-1), 'out_of_range', 'attempt'],
  ['controlled attempt 1.7', () => rp.controlledBackoffMs(1.7), 'out_of_range', 'attempt'],
  ['backoff attempt "1"', () => rp.backoffDelayMs(undefined, '1'), 'invalid_type', 'attempt'],
  ['backoff draw 2', () => rp.backoffDelayMs(new rp.Policy({ jitter: 'equal' }), 1, 2), 'invalid_random', 'random'],
  ['backoff previous 1.5', () => rp.backoffDelayMs(undefined, 1, null, 1.5), 'invalid_duration', 'previousDelayMs'],
  // policies
  ['policy factor 0.5', () => new rp.Policy({ backoff: { kind: 'exponential', factor: 0.5 } }), 'out_of_range', 'backoff.factor'],
  ['policy unknown field', () => new rp.Policy({ stratgy: 'fail_fast' }), 'unknown_field', 'stratgy'],
  ['policy unknown jitter', () => new rp.Policy({ jitter: 'gaussian' }), 'unknown_name', 'jitter'],
  ['policy version 2', () => new rp.Policy({ version: 2 }), 'unsupported_version', 'version'],
  ['policy not JSON', () => new rp.Policy('{"strategy": '), 'malformed_json', ''],
  ['policy a number', () => new rp.Policy(5), 'invalid_type', 'policy'],
  ['policy min_ms -1', () => new rp.Policy({ backoff: { kind: 'fixed', delay_ms: -1 } }), 'invalid_duration', 'backoff.delay_ms'],
  // what JSON.stringify would null or drop (then read as the default) is refused by path (issue 15)
  ['policy factor NaN', () => new rp.Policy({ backoff: { kind: 'exponential', factor: NaN } }), 'out_of_range', 'backoff.factor'],
  ['policy max_ms Infinity', () => new rp.Policy({ backoff: { kind: 'exponential', max_ms: Infinity } }), 'out_of_range', 'backoff.max_ms'],
  ['policy jitter a function', () => new rp.Policy({ jitter: () => 'full' }), 'invalid_type', 'jitter'],
  ['policy compat a Symbol', () => new rp.Policy({ compat: { retry_kv_busy: Symbol('yes') } }), 'invalid_type', 'compat.retry_kv_busy'],
  ['request from JSON, timeout_ms NaN', () => rp.requestFromJson({ service: 'kv', operation: 'get', timeout_ms: NaN }), 'out_of_range', 'timeout_ms'],
  // the wire form names the wire's fields
  ['wire timeout "2.5s"', () => rp.requestFromJson({ service: 'kv', operation: 'get', attempts: 0, elapsed_ms: 0, timeout_ms: '2.5s' }), 'invalid_duration', 'timeout_ms'],
  ['wire unknown field', () => rp.requestFromJson({ service: 'kv', operation: 'get', attempts: 0, elapsed_ms: 0, timeout_ms: 1, retries: 3 }), 'unknown_field', 'retries'],
  // batches name the request
  ['decideMany bad request', () => rp.decideMany([req({}), req({ elapsedMs: -1 })], 'KV_LOCKED'), 'invalid_duration', 'requests[1].elapsedMs'],
  ['decideMany bad attempts', () => rp.decideMany([req({ attempts: 1.5 })], 'KV_LOCKED'), 'out_of_range', 'requests[0].attempts'],
  // MongoDB / HTTP: JSON would write NaN as null; it must be a typed error instead
  ['mongodb random NaN', () => rp.mongodb.overloadBackoff(1, NaN), 'invalid_type', 'random'],
  ['mongodb attempt 1.7', () => rp.mongodb.transactionBackoff(1.7, 0.5), 'out_of_range', 'transactionAttempt'],
  ['mongodb random 1', () => rp.mongodb.transactionBackoff(1, 1), 'invalid_random', 'random'],
  ['mongodb unknown operation', () => rp.mongodb.eligibility({ name: 'mapreduce' }), 'unknown_name', 'operation.name'],
  ['http status -1', () => rp.http.classify(-1), 'out_of_range', 'status'],
  ['http now -1', () => rp.http.retryAfter('Sun, 06 Nov 1994 08:49:37 GMT', -1), 'invalid_duration', 'nowUnixMs'],
  // MongoDB / HTTP: camelCase keys in, fields named in camelCase; a snake_case key is refused where
  // given; the caller's own documents keep their names
  ['http snake_case key', () => rp.http.nextStep({ max_attempts: 3 }, { attempts: 1, elapsedMs: 0 }, { kind: 'response', status: 503 }), 'unknown_field', 'loop.max_attempts'],
  ['http state previousDelayMs -1', () => rp.http.nextStep({ maxAttempts: 3 }, { attempts: 1, elapsedMs: 0, previousDelayMs: -1 }, { kind: 'network_error' }), 'invalid_duration', 'state.previousDelayMs'],
  ['mongodb state timeoutMs -1', () => rp.mongodb.transactionStep({ timeoutMs: -1, phase: 'not_started' }, { event: 'begin' }), 'invalid_duration', 'state.timeoutMs'],
  ['mongodb writeConcernCode 1.5', () => rp.mongodb.classifyError({ kind: 'server', writeConcernCode: 1.5 }), 'out_of_range', 'error.writeConcernCode'],
  ['mongodb update operator', () => rp.mongodb.pendingTokenRewrite({ _id: 1 }, { $foo_bar: { my_count: 1 } }, 't'), 'unknown_name', 'update.$foo_bar'],
  ['http now Infinity', () => rp.http.retryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Infinity), 'invalid_duration', 'nowUnixMs'],
  // simulation
  ['simulate latency -1', () => rp.simulate({ request: req({}), outcomes: [null], latencyMs: -1 }), 'invalid_duration', 'latencyMs'],
  ['simulate unknown outcome', () => rp.simulate({ request: req({}), outcomes: ['NOPE'], latencyMs: 1 }), 'unknown_reason', 'outcomes[0]'],
  ['simulate draw 1', () => rp.simulate({ request: req({}), outcomes: [null], latencyMs: 1, draws: [1] }), 'invalid_random', 'draws[0]'],
]

for (const [name, fn, code, field] of CASES) {
  test(`${name} → ${code} naming ${JSON.stringify(field)}`, () => rejects(fn, code, field))
}

test('the error codes are the core stable codes', () => {
  assert.deepEqual([...rp.ERROR_CODES].sort(), [
    'invalid_duration', 'invalid_random', 'invalid_type', 'malformed_json', 'missing_field',
    'out_of_range', 'unknown_field', 'unknown_name', 'unknown_reason', 'unsupported_version',
  ])
})

test('valid edge values pass: 0, 2^53 − 1, u32::MAX attempts, bigint up to 2^64 − 1', () => {
  const max = Number.MAX_SAFE_INTEGER
  assert.equal(rp.decide(req({ elapsedMs: 0, timeoutMs: max }), 'KV_LOCKED').action, 'retry')
  assert.equal(rp.decide(req({ attempts: 4294967295, timeoutMs: max }), 'KV_LOCKED').delayMs, 500)
  assert.equal(rp.decide(req({ elapsedMs: 2n ** 64n - 1n, timeoutMs: 2n ** 64n - 1n }), 'KV_LOCKED').cause, 'deadline_passed')
  assert.equal(rp.classifyKv('get', 65535).reason, null)
  assert.equal(rp.classifyKv('get', '0xA2').reason, 'KV_SYNC_WRITE_IN_PROGRESS')
})

test('-0 is accepted as 0 and comes back as +0, from decide and decideMany alike', () => {
  for (const d of [rp.decide(req({ attempts: -0, elapsedMs: -0 }), 'KV_LOCKED'), ...rp.decideMany([req({ attempts: -0 })], 'KV_LOCKED')]) {
    assert.ok(Object.is(d.attempts, 0), `attempts ${Object.is(d.attempts, -0) ? '-0' : d.attempts}`)
  }
  // An equal decision asked for with +0 afterwards is not the -0 one either.
  assert.ok(Object.is(rp.decide(req({ attempts: 0 }), 'KV_LOCKED').attempts, 0))
})

// Hostile values in every argument and every request field: each call returns, or throws a typed
// error, or lets through what the input's own trap threw. A crash would take this process down.
const trap = new RangeError('trap')
const HOSTILE = [
  undefined, null, NaN, -1, 1.5, 2 ** 64, -0, '', 'x'.repeat(10_000), 'é'.repeat(40), '0x', {}, [], [1], () => 1,
  Symbol('s'), 10n, -1n, 2n ** 70n, Object.create(null), new Proxy({}, { get() { throw trap } }),
]
const decision = rp.decide(base, 'KV_LOCKED')
const ARGS = {
  parseReason: ['KV_LOCKED'],
  reasonFlags: ['KV_LOCKED'],
  isIdempotent: [{ service: 'kv', operation: 'get' }],
  decide: [base, 'KV_LOCKED', undefined, undefined],
  decideMany: [[base], 'KV_LOCKED', undefined],
  decideBeforeStrategy: [base, 'KV_LOCKED', undefined],
  decideAfterStrategy: [base, 'KV_LOCKED', 5],
  bestEffortDelay: [base, 'KV_LOCKED', undefined],
  formatDecision: [decision],
  explain: [base, decision],
  classifyKv: ['get', 7, undefined],
  classifyQuery: [4040, '', undefined],
  classifyAnalytics: [1],
  classifySearch: [429],
  classifyViews: [404, ''],
  classifyDispatch: ['socket_not_available'],
  controlledBackoffMs: [1],
  backoffDelayMs: [undefined, 1, undefined, undefined],
  requestFromJson: ['{"service":"kv","operation":"get","attempts":0,"elapsed_ms":0,"timeout_ms":1}'],
  requestToJson: [base],
  simulate: [{ request: base, outcomes: [null], latencyMs: 1 }],
}

function survives(label, fn) {
  try {
    fn()
  } catch (e) {
    assert.ok(e === trap || rp.isRetryPolicyError(e), `${label}: ${e && e.stack}`)
  }
}

test('hostile values give typed errors, never a crash', () => {
  for (const [name, args] of Object.entries(ARGS)) {
    for (let i = 0; i < args.length; i++) {
      for (const [k, v] of HOSTILE.entries()) {
        const a = [...args]
        a[i] = v
        survives(`${name} argument ${i} = HOSTILE[${k}]`, () => rp[name](...a))
      }
    }
  }
  const fields = ['service', 'operation', 'readonly', 'method', 'timeoutMs', 'elapsedMs', 'attempts', 'idempotent',
    'strategy', 'random', 'previousDelayMs', 'previousReasons']
  for (const f of fields) {
    for (const [k, v] of HOSTILE.entries()) {
      const r = { ...base, [f]: v }
      for (const name of ['decide', 'decideBeforeStrategy', 'bestEffortDelay', 'requestToJson']) {
        survives(`${name} request.${f} = HOSTILE[${k}]`, () => rp[name](r, 'KV_LOCKED'))
      }
      survives(`decide with a strategy, request.${f} = HOSTILE[${k}]`, () => rp.decide(r, 'KV_LOCKED', undefined, () => 1))
    }
  }
})

test('a strategy answer that is not milliseconds is invalid_duration naming retryAfter (invalid_type when no number)', () => {
  const bad = [-1, 1.5, NaN, 2 ** 64, '', '5', -1n, 2n ** 70n]
  for (const v of bad) rejects(() => rp.decide(base, 'KV_LOCKED', undefined, () => v), 'invalid_duration', 'retryAfter')
  const wrong = [true, {}, [], () => 1, Symbol('s'), new Proxy({}, { get() { throw trap } })]
  for (const v of wrong) rejects(() => rp.decide(base, 'KV_LOCKED', undefined, () => v), 'invalid_type', 'retryAfter')
  const good = [[0, 0], [-0, 0], [7n, 7], [null, null], [undefined, null]]
  for (const [v, delay] of good) assert.equal(rp.decide(base, 'KV_LOCKED', undefined, () => v).delayMs ?? null, delay)
})

test('the addon refuses any object but its own policy handle as a policy', { skip: which !== 'native' && 'native addon only' }, () => {
  const native = createRequire(import.meta.url)('../index.js')
  const map = new native.ObjectHandle('error_map', JSON.stringify({ document: '{"version": 1, "revision": 1, "errors": {}}' }))
  const make = (...parts) => parts
  const decide = (policy) => native.decide('kv', 'get', undefined, undefined, 2500, 10, 1, undefined, undefined,
    undefined, undefined, undefined, 'KV_LOCKED', policy, make)
  const bestEffort = (policy) => JSON.parse(native.callJson('best_effort_delay', '{"reason": "KV_LOCKED"}', base, policy))
  for (const fake of [map, {}, Object.create(native.PolicyHandle.prototype)]) {
    assert.throws(() => bestEffort(fake), Error)
    assert.throws(() => decide(fake), Error)
  }
  const policy = new native.PolicyHandle('{"backoff": {"kind": "fixed", "delay_ms": 7}}')
  assert.equal(bestEffort(policy).delay_ms, 7)
  assert.deepEqual(decide(policy).slice(0, 2), [true, 7])
})

test('the shipped addon and its typings have no bench-only export (cargo feature `bench`)', { skip: which !== 'native' && 'native addon only' }, () => {
  const native = createRequire(import.meta.url)('../index.js')
  assert.ok(typeof native.decide === 'function' && typeof native.PolicyHandle === 'function')
  assert.deepEqual(Object.keys(native).filter((name) => /bench/i.test(name)), [])
  assert.doesNotMatch(fs.readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8'), /bench/i)
})

test("an object's call checks its arguments as numbers are checked everywhere: never coerced, never a RangeError", () => {
  const budget = () => new rp.RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.5 })
  const breaker = new rp.CircuitBreaker()
  const cyclic = {}
  cyclic.self = cyclic
  let deep = 0
  for (let i = 0; i < 100_000; i++) deep = [deep]
  // milliseconds: a number or a bigint; a decimal string, an object, NaN or 2^53 are refused by name
  rejects(() => budget().permit('5'), 'invalid_duration', 'nowMs')
  rejects(() => budget().tryRetry(2 ** 53), 'invalid_duration', 'nowMs')
  rejects(() => breaker.state(NaN), 'invalid_duration', 'nowMs')
  rejects(() => breaker.permit(cyclic), 'invalid_type', 'nowMs')
  rejects(() => budget().permit(deep), 'invalid_type', 'nowMs')
  rejects(() => new rp.aws.AdaptiveRateLimiter(undefined, { toJSON: () => 5 }), 'invalid_type', 'startMs')
  assert.equal(budget().permit(5n).permitted, true)
  // names and flags: their own type only (no boxed value, no map form of a name)
  rejects(() => breaker.record(0, { failure: null }), 'invalid_type', 'outcome')
  rejects(() => budget().permit(0, new String('timeout')), 'invalid_type', 'cause')
  rejects(() => new rp.aws.AdaptiveRateLimiter().record(0, new Boolean(false)), 'invalid_type', 'throttled')
  rejects(() => budget().record(0, { kind: 'success', afterRetry: cyclic }), 'invalid_type', 'event.afterRetry')
  // counts and draws: NaN by the code their kind takes, a bigint is no count
  rejects(() => rp.aws.decide(null, NaN, { code: 'Throttling' }), 'out_of_range', 'attempts')
  rejects(() => rp.aws.decide(null, 10n, { code: 'Throttling' }), 'invalid_type', 'attempts')
  rejects(() => rp.aws.decide(null, '1', { code: 'Throttling' }), 'invalid_type', 'attempts')
  rejects(() => rp.grpc.retry(null, { attempts: 1 }, { status: 'UNAVAILABLE' }, { random: Infinity }), 'invalid_random', 'random')
  rejects(() => new rp.grpc.HedgingPolicy({ maxAttempts: 3 }, { maxAttemptsCap: NaN }), 'out_of_range', 'maxAttemptsCap')
  // a name or a flag given NaN is of the wrong type, not a number out of range
  rejects(() => breaker.record(0, NaN), 'invalid_type', 'outcome')
  rejects(() => budget().record(0, { kind: NaN }), 'invalid_type', 'event.kind')
  // a lone surrogate is read as napi and wasm-bindgen read strings (U+FFFD), not a malformed call
  rejects(() => budget().permit(0, '\ud800'), 'unknown_name', 'cause')
  assert.equal(new rp.grpc.ServiceConfig({}).policyFor('\ud800'), null)
  // NaN inside a document or an argument object is named where it is
  rejects(() => new rp.RetryBudget({ kind: 'token_bucket', max_tokens: NaN, token_ratio: 0.5 }), 'out_of_range', 'budget.max_tokens')
  rejects(() => new rp.CircuitBreaker({ sleep_window_ms: NaN }), 'out_of_range', 'breaker.sleep_window_ms')
  rejects(() => rp.grpc.retry(null, { attempts: 1, elapsedMs: NaN }, { status: 'UNAVAILABLE' }), 'out_of_range', 'state.elapsedMs')
  rejects(() => rp.aws.decide(null, 1, { retryAfter: NaN }), 'out_of_range', 'error.retryAfter')
  // a document's toJSON is checked as what it returns: a cycle or a deep array is typed, not a TypeError or RangeError
  const cyclicJson = { toJSON: () => cyclic }
  const deepJson = { toJSON: () => deep }
  rejects(() => new rp.RetryBudget(cyclicJson), 'invalid_type', 'budget.self')
  assert.throws(() => new rp.RetryBudget(deepJson), (e) => rp.isRetryPolicyError(e) && e.code === 'out_of_range' && e.field.startsWith('budget[0]'))
  assert.throws(() => rp.grpc.retry(null, deepJson, { status: 'UNAVAILABLE' }), (e) => rp.isRetryPolicyError(e) && e.code === 'out_of_range')
  assert.equal(new rp.RetryBudget({ toJSON: () => ({ kind: 'retry_quota', capacity: 5 }) }).toJSON().capacity, 5)
})
