// The package's `./http` export in Node: the same facade over the HTTP module (pkg-http/, built
// with `--no-default-features --features http`). What it holds answers as the full module does
// (the Node package's fetch suite runs over it too: make test-node-api); what it leaves out throws
// the core's typed not-built error naming the function or class and the feature, never a
// TypeError. Expected answers are worked out from the rules in the comments, not read back.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { readFileSync, statSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const http = (await import('../pkg-http/index.mjs')).default
const full = (await import('../index.mjs')).default
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))

test('the ./http export names the HTTP module, for Node and for pages, and its API is the full one', () => {
  const exp = manifest.exports['./http']
  assert.equal(exp.node.default, './pkg-http/index.mjs')
  assert.equal(exp.browser.default, './pkg-http/browser.mjs')
  for (const file of [exp.node.default, exp.browser.default, './pkg-http/web/retrypolicy_wasm_bg.wasm']) {
    assert.ok(statSync(fileURLToPath(new URL(`../${file}`, import.meta.url))).size > 0, file)
  }
  assert.deepEqual(Object.keys(http).sort(), Object.keys(full).sort())
  assert.equal(http.version, full.version)
})

test('RFC 0049 decide and the HTTP rules answer as in the full module', () => {
  // Best effort's first retry of a KV get after KV_LOCKED, no jitter: 1 ms (RFC 0049 backoff 1 ms x 2^0).
  const d = http.decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED', new http.Policy({ jitter: 'none' }))
  assert.deepEqual([d.action, d.delayMs, d.rule], ['retry', 1, 'best_effort_backoff'])
  // RFC 9110: 503 is transient and honours Retry-After.
  const c = http.http.classify(503)
  assert.deepEqual([c.class, c.retryAfter, c.retryReason], ['transient', true, 'SERVICE_RESPONSE_CODE_INDICATED'])
  // A POST whose connection broke after it may have been sent is not retried (RFC 9110 §9.2.2).
  const next = http.http.nextStep({ maxAttempts: 3, method: 'POST' }, { attempts: 1, elapsedMs: 0 }, { kind: 'network_error' })
  assert.deepEqual([next.action, next.rule], ['stop', 'not_idempotent_after_send'])
  for (const api of [http, full]) {
    const run = new api.Run({ rules: { http: { method: 'GET' } }, maxAttempts: 2 })
    assert.equal(run.start(0).action, 'send')
    // 429 with Retry-After: 2 (seconds): wait 2000 ms, the server's delay.
    const wait = run.attemptEnded({ kind: 'http', status: 429, retryAfter: '2' }, 5)
    assert.deepEqual([wait.action, wait.delayMs, wait.rule], ['wait', 2000, 'retry_after'])
  }
})

/** What a left-out member throws: [its code, field, whether typed, whether it names `name` and `feature`]. */
function thrown(f, name, feature) {
  try {
    f()
  } catch (e) {
    return [e.code, e.field, http.isRetryPolicyError(e), e.message.includes(`"${name}"`) && e.message.includes(`"${feature}"`)]
  }
  return ['no error']
}

const REQUEST = { service: 'kv', operation: 'get', timeoutMs: 2500 }
/** gRFC A6's example retry policy. */
const A6 = { maxAttempts: 4, initialBackoff: '0.1s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] }

// Every member of a left-out domain: the function or class it names, and the feature.
const UNBUILT = [
  [() => http.classifyKv('get', 0x86), 'classify_kv', 'couchbase'],
  [() => http.classifyQuery(12009, 'CAS mismatch'), 'classify_query', 'couchbase'],
  [() => http.classifyAnalytics(23007), 'classify_analytics', 'couchbase'],
  [() => http.classifySearch(429), 'classify_search', 'couchbase'],
  [() => http.classifyViews(500, ''), 'classify_views', 'couchbase'],
  [() => new http.ErrorMap({ version: 1, revision: 1, errors: {} }), 'ErrorMap', 'couchbase'],
  [() => new http.RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }), 'RetryBudget', 'guards'],
  [() => http.RetryBudget.restore({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }, { kind: 'token_bucket', balance: 1 }), 'RetryBudget', 'guards'],
  [() => new http.CircuitBreaker({}), 'CircuitBreaker', 'guards'],
  [() => http.decideWithBudget(REQUEST, 'KV_LOCKED'), 'decide_with_budget', 'guards'],
  [() => http.explainWithBudget(REQUEST, 'KV_LOCKED'), 'explain_with_budget', 'guards'],
  [() => http.simulate({ request: REQUEST, outcomes: ['KV_LOCKED'], latencyMs: 1 }), 'simulate', 'storms'],
  [() => http.simulateStorm({ request: REQUEST, reason: 'KV_LOCKED', requestsPerSecond: 10, durationMs: 1000, latencyMs: 1 }), 'simulate_storm', 'storms'],
  [() => http.mongodb.decide({ operation: 'find', attempts: 0 }, { code: 91 }), 'mongodb_decide', 'mongodb'],
  [() => http.mongodb.classifyError({ code: 91 }), 'mongodb_classify_error', 'mongodb'],
  // gRPC and AWS: their classes, and their functions even without a policy or a configuration.
  [() => new http.grpc.ServiceConfig({ methodConfig: [] }), 'ServiceConfig', 'grpc'],
  [() => new http.grpc.RetryPolicy(A6), 'RetryPolicy', 'grpc'],
  [() => new http.grpc.HedgingPolicy({ maxAttempts: 2 }), 'HedgingPolicy', 'grpc'],
  [() => http.grpc.retry(null, { attempts: 1 }, { status: 'UNAVAILABLE', reach: 'never_sent' }), 'grpc_retry', 'grpc'],
  [() => http.grpc.hedge(null, null, 'start'), 'grpc_hedge', 'grpc'],
  [() => new http.aws.RetryConfig({ mode: 'standard' }), 'AwsRetryConfig', 'aws'],
  [() => http.aws.decide(null, 1, { status: 503 }, { random: 0.5 }), 'aws_decide', 'aws'],
  [() => new http.aws.AdaptiveRateLimiter(), 'AdaptiveRateLimiter', 'aws'],
  [() => http.aws.AdaptiveRateLimiter.restore(null, { enabled: false }), 'AdaptiveRateLimiter', 'aws'],
]

test('each function and class of a left-out domain throws the typed not-built error naming it and its feature', () => {
  for (const [f, name, feature] of UNBUILT) {
    const field = /^[A-Z]/.test(name) ? 'class' : 'function'
    assert.deepEqual(thrown(f, name, feature), ['unknown_name', field, true, true], name)
  }
  // The full module has every one of them: the same calls answer there.
  assert.equal(full.classifyKv('get', 0x86).reason, 'KV_TEMPORARY_FAILURE')
  assert.equal(new full.RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }).permit(0).permitted, true)
  assert.equal(full.grpc.retry(null, { attempts: 1 }, { status: 'UNAVAILABLE', reach: 'never_sent' }).rule, 'transparent_never_sent')
  assert.equal(full.aws.decide(null, 1, { status: 503 }, { random: 0.5 }).delayMs, 500)
  // A run's gRPC and AWS outcomes name the kind and the feature, as a kv or mongodb one does.
  for (const [kind, outcome] of [['grpc', { kind: 'grpc', status: 'UNAVAILABLE' }], ['aws', { kind: 'aws', error: { status: 503 } }]]) {
    const run = new http.Run({ rules: { http: { method: 'GET' } }, maxAttempts: 2 })
    run.start(0)
    assert.deepEqual(thrown(() => run.attemptEnded(outcome, 1), kind, kind), ['unknown_name', 'outcome.kind', true, true])
  }
})

test('mongodb.runTransaction over the HTTP module throws the not-built error, not a TypeError', async () => {
  const session = { startTransaction () {}, async commitTransaction () {}, async abortTransaction () {} }
  await assert.rejects(http.mongodb.runTransaction(session, async () => 1),
    (e) => e.code === 'unknown_name' && http.isRetryPolicyError(e) && e.message.includes('"mongodb"'))
})

test('retryFetch and retry run over the HTTP module against a server on 127.0.0.1', async () => {
  const hits = []
  const server = createServer((req, res) => {
    hits.push(req.method)
    const status = hits.length === 1 ? 503 : 200
    res.writeHead(status, { 'content-type': 'text/plain' })
    res.end(status === 200 ? 'ok' : 'busy')
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const sleeps = []
    const sleep = async (ms) => { sleeps.push(ms) }
    const response = await http.retryFetch(`http://127.0.0.1:${server.address().port}/orders`, undefined, { maxAttempts: 3, sleep })
    assert.deepEqual([response.status, await response.text()], [200, 'ok'])
    assert.deepEqual(hits, ['GET', 'GET'])
    // A refused connection (never sent), then a value: RFC 0049 best effort's first wait, 1 ms.
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
    const value = await http.retry(async ({ attempt }) => { if (attempt === 1) throw refused; return attempt },
      { operation: { service: 'search' }, timeoutMs: 1000, sleep })
    assert.equal(value, 2)
    // The HTTP loop's first backoff after a 503 without Retry-After: 100 ms x 2^0 (no jitter by default).
    assert.deepEqual(sleeps, [100, 1])
    // A budget given to retryFetch is a RetryBudget, which this module cannot make.
    await assert.rejects(http.retryFetch('http://127.0.0.1:1/', undefined, { maxAttempts: 2, sleep, budget: {} }),
      (e) => http.isRetryPolicyError(e) && e.field === 'budget')
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
})

test('the HTTP module is the smaller one', () => {
  const size = (dir) => statSync(fileURLToPath(new URL(`../${dir}/web/retrypolicy_wasm_bg.wasm`, import.meta.url))).size
  assert.ok(size('pkg-http') < size('pkg'), `${size('pkg-http')} bytes against ${size('pkg')}`)
})
