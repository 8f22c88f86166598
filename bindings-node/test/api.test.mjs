// The public API's behaviour: reasons, strategies, logging, policies, error maps, module formats.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import rp, { which } from './binding.mjs'

const get = { service: 'kv', operation: 'get', timeoutMs: 2500 }
const upsert = { service: 'kv', operation: 'upsert', timeoutMs: 2500 }

test('RetryReason is frozen, mirrors the core table, and matches the TypeScript union', () => {
  assert.ok(Object.isFrozen(rp.RetryReason))
  const names = Object.values(rp.RetryReason)
  assert.equal(names.length, 21) // the RFC table's 20 and QUERY_ERROR_RETRYABLE
  for (const n of names) assert.equal(rp.RetryReason[n], n)
  const dts = fs.readFileSync(new URL('../lib/retrypolicy.d.ts', import.meta.url), 'utf8')
  const union = dts.match(/export type RetryReasonName =([^]*?)\n\n/)[1]
  assert.deepEqual([...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]), names)
  assert.deepEqual(rp.reasonFlags('KV_NOT_MY_VBUCKET'), {
    name: 'KV_NOT_MY_VBUCKET', allowsNonIdempotentRetry: true, alwaysRetry: true,
  })
  assert.equal(rp.parseReason('KV_SYNC_RE_COMMIT_IN_PROGRESS'), 'KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS')
  assert.equal(rp.allowsNonIdempotentRetry('SOCKET_CLOSED_WHILE_IN_FLIGHT'), false)
  assert.equal(rp.alwaysRetry('VIEWS_NO_ACTIVE_PARTITION'), true)
})

test('idempotency follows the RFC list; the request override wins in decide', () => {
  assert.equal(rp.isIdempotent({ service: 'kv', operation: 'get' }), true)
  assert.equal(rp.isIdempotent({ service: 'kv', operation: 'exists' }), false)
  assert.equal(rp.isIdempotent({ service: 'query' }), false)
  assert.equal(rp.isIdempotent({ service: 'query', readonly: true }), true)
  assert.equal(rp.isIdempotent({ service: 'cluster_manager', method: 'GET' }), true)
  assert.equal(rp.decide({ ...upsert, idempotent: true }, 'SOCKET_CLOSED_WHILE_IN_FLIGHT').action, 'retry')
  assert.equal(rp.decide(upsert, 'SOCKET_CLOSED_WHILE_IN_FLIGHT').cause, 'not_idempotent')
})

test('decide: the RFC capping example, deadline, UNKNOWN, and frozen decisions', () => {
  const d = rp.decide({ ...upsert, attempts: 7, elapsedMs: 2000 }, 'KV_NOT_MY_VBUCKET')
  assert.deepEqual(d, {
    action: 'retry', delayMs: 500, capped: true, thenCancel: true, reason: 'KV_NOT_MY_VBUCKET',
    rule: 'always_retry_controlled_backoff',
    section: 'RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry', attempts: 7, idempotent: false,
  })
  assert.equal(rp.formatDecision(d),
    'retry 8 after 500 ms, capped to the timeout, then cancel (reason KV_NOT_MY_VBUCKET, rule always_retry_controlled_backoff; RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry)')
  assert.equal(rp.decide({ ...get, elapsedMs: 2500 }, 'KV_NOT_MY_VBUCKET').cause, 'deadline_passed')
  assert.equal(rp.decide(get, 'UNKNOWN').rule, 'unknown_never_retried')
  assert.deepEqual(rp.decide({ ...get, attempts: 3 }, 'KV_LOCKED'), {
    action: 'retry', delayMs: 8, capped: false, thenCancel: false, reason: 'KV_LOCKED', rule: 'best_effort_backoff',
    section: 'RFC 0049, Best Effort', attempts: 3, idempotent: true,
  })
  assert.ok(Object.isFrozen(d))
  assert.throws(() => { d.delayMs = 1 }, TypeError)
})

test('a function strategy decides its reasons and defers the rest to best effort', () => {
  const seen = []
  const noLockRetries = (request, reason) => {
    seen.push([request, reason])
    return reason === 'KV_LOCKED' ? null : rp.bestEffortDelay(request, reason)
  }
  const locked = rp.decide({ ...get, attempts: 2 }, 'KV_LOCKED', undefined, noLockRetries)
  assert.equal(locked.action, 'no_retry')
  assert.equal(locked.cause, 'strategy_declined')
  assert.equal(locked.rule, 'custom_strategy')
  const tmp = rp.decide({ ...get, attempts: 2 }, 'KV_TEMPORARY_FAILURE', undefined, noLockRetries)
  assert.equal(tmp.delayMs, 4)
  assert.equal(tmp.rule, 'custom_strategy')
  assert.equal(seen.length, 2)
  assert.equal(seen[0][1], 'KV_LOCKED')
  // Always-retry reasons never reach the strategy; the strategy's delay is still capped.
  rp.decide(get, 'KV_NOT_MY_VBUCKET', undefined, noLockRetries)
  assert.equal(seen.length, 2)
  const capped = rp.decide({ ...get, elapsedMs: 2400 }, 'KV_LOCKED', undefined, () => 10_000)
  assert.deepEqual([capped.delayMs, capped.capped, capped.thenCancel], [100, true, true])
  // The reason reaches the strategy by its canonical name.
  rp.decide(get, 'KV_SYNC_RE_COMMIT_IN_PROGRESS', undefined, (_r, reason) => { seen.push(reason); return 1 })
  assert.equal(seen.at(-1), 'KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS')
})

test('strategy objects and classes: subclassing BestEffort, FailFast, and a per-request override', () => {
  class NoLockRetries extends rp.BestEffort {
    retryAfter(request, reason) {
      return reason === 'KV_LOCKED' ? null : super.retryAfter(request, reason)
    }
  }
  const s = new NoLockRetries()
  assert.equal(rp.decide(get, 'KV_LOCKED', undefined, s).cause, 'strategy_declined')
  assert.equal(rp.decide(get, 'KV_TEMPORARY_FAILURE', undefined, s).delayMs, 1)
  const slow = new rp.BestEffort(new rp.Policy({ backoff: { kind: 'fixed', delay_ms: 250 } }))
  const d = rp.decide(get, 'KV_LOCKED', undefined, slow)
  assert.deepEqual([d.delayMs, d.rule], [250, 'best_effort_backoff'])
  assert.equal(rp.decide(get, 'KV_LOCKED', undefined, new rp.FailFast()).rule, 'fail_fast')
  assert.equal(rp.decide(get, 'KV_LOCKED', undefined, { retryAfter: () => 42 }).delayMs, 42)
  assert.equal(rp.decide(get, 'KV_LOCKED', undefined, { retryAfter: () => undefined }).action, 'no_retry')
  // A per-request built-in strategy wins over the host strategy (RFC 0049, Request Annotation).
  let asked = false
  const r = rp.decide({ ...get, strategy: 'fail_fast' }, 'KV_LOCKED', undefined, () => { asked = true; return 1 })
  assert.deepEqual([r.rule, asked], ['fail_fast', false])
})

test('a throw in user strategy code propagates unchanged', () => {
  const boom = new RangeError('boom')
  assert.throws(() => rp.decide(get, 'KV_LOCKED', undefined, () => { throw boom }), (e) => e === boom)
  const weird = { not: 'an error' }
  assert.throws(() => rp.decide(get, 'KV_LOCKED', undefined, { retryAfter() { throw weird } }), (e) => e === weird)
  // A strategy that decides other requests itself does not disturb the decision it is asked for.
  const nested = (request, reason) => {
    rp.decide({ service: 'search', timeoutMs: 9, attempts: 5 }, 'SEARCH_TOO_MANY_REQUESTS')
    rp.classifyKv('upsert', 0x86)
    return rp.bestEffortDelay(request, reason)
  }
  const d = rp.decide({ ...get, attempts: 3, elapsedMs: 7 }, 'KV_LOCKED', undefined, nested)
  assert.deepEqual([d.delayMs, d.attempts, d.reason], [8, 3, 'KV_LOCKED'])
})

test('Orchestrator reports one structured record per decision to onDecision and as an event', () => {
  const records = []
  const events = []
  const o = new rp.Orchestrator({ onDecision: (r) => records.push(r) })
  o.on('decision', (r) => events.push(r))
  const d1 = o.decide({ ...upsert, attempts: 7, elapsedMs: 2000 }, 'KV_NOT_MY_VBUCKET')
  const d2 = o.decide(upsert, 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  assert.equal(records.length, 2)
  assert.deepEqual(events, records)
  assert.deepEqual(
    { ...records[0], decision: undefined },
    {
      action: 'retry', reason: 'KV_NOT_MY_VBUCKET', attempts: 7, delayMs: 500, rule: 'always_retry_controlled_backoff',
      section: 'RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry', cause: null, service: 'kv',
      message: rp.formatDecision(d1), decision: undefined,
    },
  )
  assert.equal(records[1].decision, d2)
  assert.deepEqual([records[1].delayMs, records[1].cause], [null, 'not_idempotent'])
  assert.match(records[1].message, /^no retry after 0 retries: not idempotent \(reason SOCKET_CLOSED_WHILE_IN_FLIGHT/)
  const quiet = new rp.Orchestrator({ policy: new rp.Policy({ strategy: 'fail_fast' }) })
  assert.equal(quiet.decide(get, 'KV_LOCKED').rule, 'fail_fast')
})

test('policies: JSON in and out, defaults, and compat options reach classification', () => {
  const p = new rp.Policy({ jitter: 'full', backoff: { kind: 'exponential', max_ms: 1000 } })
  const doc = p.toJSON()
  assert.equal(doc.version, 1)
  assert.deepEqual(doc.backoff, { kind: 'exponential', min_ms: 1, max_ms: 1000, factor: 2, first: 'min' })
  assert.deepEqual(rp.Policy.fromJson(p.toJson()).toJSON(), doc)
  assert.deepEqual(JSON.parse(JSON.stringify(p)), doc)
  assert.deepEqual(new rp.Policy().toJSON(), new rp.Policy('{}').toJSON())
  assert.equal(rp.decide({ ...get, attempts: 9, random: 0.5 }, 'KV_LOCKED', p).delayMs, 256)
  assert.equal(rp.backoffDelayMs(p, 9, 0.5), 256)
  assert.equal(rp.backoffDelayMs(undefined, 3), 8)
  assert.equal(rp.controlledBackoffMs(99), 1000)
  const busy = new rp.Policy({ compat: { retry_kv_busy: true } })
  assert.equal(rp.classifyKv('get', 0x85).reason, null)
  assert.equal(rp.classifyKv('get', 0x85, { policy: busy }).reason, 'KV_TEMPORARY_FAILURE')
  const go = new rp.Policy({ compat: { query_retry_4040_to_4090: true } })
  assert.equal(rp.classifyQuery(4060, '', { policy: go }).reason, 'QUERY_PREPARED_STATEMENT_FAILURE')
  assert.equal(rp.classifyQuery(4060, '').reason, null)
})

test('error maps: only retry-now / retry-later indicate retry, as a document or parsed once', () => {
  const doc = { version: 1, revision: 1, errors: { ff01: { name: 'X', desc: '', attrs: ['temp', 'retry-later'] }, ff02: { name: 'Y', desc: '', attrs: ['temp'] } } }
  const map = new rp.ErrorMap(doc)
  assert.equal(rp.classifyKv('get', 0xff01, { errorMap: map }).reason, 'KV_ERROR_MAP_RETRY_INDICATED')
  assert.equal(rp.classifyKv('get', 0xff01, { errorMap: doc }).reason, 'KV_ERROR_MAP_RETRY_INDICATED')
  assert.equal(rp.classifyKv('get', 0xff01, { errorMap: JSON.stringify(doc) }).reason, 'KV_ERROR_MAP_RETRY_INDICATED')
  assert.equal(rp.classifyKv('get', 0xff02, { errorMap: map }).rule, 'kv_error_map_no_retry_indication')
  assert.equal(rp.classifyKv('get', 0xff01).rule, 'kv_unknown_status_not_in_error_map')
  const unlock = rp.classifyKv('unlock', 0x09)
  assert.deepEqual([unlock.reason, unlock.surfaceAs], [null, 'cas_mismatch'])
  assert.deepEqual(rp.classifyKv('get', 0x07), {
    reason: 'KV_NOT_MY_VBUCKET', rule: 'kv_response_code', section: 'RFC 0049, Response Code Retry List', surfaceAs: null,
  })
  assert.ok(Object.isFrozen(rp.classifyKv('get', 0x07)))
  assert.equal(rp.classifyViews(302, '').reason, 'VIEWS_NO_ACTIVE_PARTITION')
  assert.equal(rp.classifyDispatch('circuit_breaker_open').reason, 'CIRCUIT_BREAKER_OPEN')
  assert.equal(rp.classifySearch(429).reason, 'SEARCH_TOO_MANY_REQUESTS')
  assert.equal(rp.classifyAnalytics(23003).reason, 'ANALYTICS_TEMPORARY_FAILURE')
})

test('simulate replays a schedule with the same decisions decide takes', () => {
  const t = rp.simulate({ request: { ...get, timeoutMs: 100 }, outcomes: ['KV_LOCKED'], repeatLast: true, latencyMs: 10 })
  assert.equal(t.ending, 'timed_out')
  assert.ok(t.steps.length > 3)
  assert.ok(t.totalMs >= 100)
  const first = t.steps[0]
  assert.deepEqual([first.attempt, first.sentAtMs, first.doneAtMs, first.reason], [0, 0, 10, 'KV_LOCKED'])
  assert.deepEqual(first.decision, rp.decide({ ...get, timeoutMs: 100, elapsedMs: 10 }, 'KV_LOCKED'))
  assert.ok(Object.isFrozen(first.decision))
  const ok = rp.simulate({ request: upsert, outcomes: ['KV_TEMPORARY_FAILURE', null], latencyMs: 5 })
  assert.deepEqual([ok.ending, ok.steps.length, ok.steps[1].decision, ok.waitedMs], ['succeeded', 2, null, 1])
})

test('the wire form round-trips, with bigint past 2^53 − 1', () => {
  const r = rp.requestFromJson('{"service":"query","readonly":true,"attempts":2,"elapsed_ms":5,"timeout_ms":"18446744073709551615","previous_reasons":["KV_LOCKED"]}')
  assert.deepEqual(r, { service: 'query', readonly: true, attempts: 2, elapsedMs: 5, timeoutMs: 18446744073709551615n, previousReasons: ['KV_LOCKED'] })
  assert.equal(JSON.parse(rp.requestToJson(r)).timeout_ms, '18446744073709551615')
  assert.equal(rp.decide(r, 'KV_LOCKED').delayMs, 4)
})

test('decideMany equals decide per request, with one reason or one each', () => {
  const reqs = [get, upsert, { service: 'search', timeoutMs: 10, elapsedMs: 9 }, { ...get, attempts: 100 }]
  const reasons = ['KV_LOCKED', 'SOCKET_CLOSED_WHILE_IN_FLIGHT', 'SEARCH_TOO_MANY_REQUESTS', 'KV_TEMPORARY_FAILURE']
  assert.deepEqual(rp.decideMany(reqs, reasons), reqs.map((q, i) => rp.decide(q, reasons[i])))
  assert.deepEqual(rp.decideMany(reqs, 'KV_LOCKED'), reqs.map((q) => rp.decide(q, 'KV_LOCKED')))
  const withHistory = [{ ...get, previousReasons: ['KV_LOCKED'] }, get]
  assert.deepEqual(rp.decideMany(withHistory, 'KV_LOCKED'), withHistory.map((q) => rp.decide(q, 'KV_LOCKED')))
  assert.deepEqual(rp.decideMany([], 'KV_LOCKED'), [])
})

test('decideMany: each call\'s result is its own, even when a getter calls decideMany again', () => {
  // Found on the old main: the batch buffer was module-level, so a nested call overwrote the outer
  // call's decisions and the upsert came back as "retry 1 after 1 ms (reason KV_LOCKED)".
  let nested
  const r2 = {
    service: 'kv', operation: 'get', timeoutMs: 2500,
    get attempts() {
      nested = rp.decideMany([{ ...get, attempts: 0 }], 'KV_LOCKED')
      return 2
    },
  }
  const [forUpsert, forGet] = rp.decideMany([upsert, r2], 'SOCKET_CLOSED_WHILE_IN_FLIGHT')
  assert.deepEqual(forUpsert, {
    action: 'no_retry', cause: 'not_idempotent', reason: 'SOCKET_CLOSED_WHILE_IN_FLIGHT', rule: 'best_effort_not_idempotent',
    section: 'RFC 0049, Best Effort', attempts: 0, idempotent: false,
  })
  assert.equal(rp.formatDecision(forUpsert),
    'no retry after 0 retries: not idempotent (reason SOCKET_CLOSED_WHILE_IN_FLIGHT, rule best_effort_not_idempotent; RFC 0049, Best Effort)')
  assert.deepEqual([forGet.action, forGet.delayMs, forGet.attempts, forGet.reason], ['retry', 4, 2, 'SOCKET_CLOSED_WHILE_IN_FLIGHT'])
  assert.deepEqual([nested[0].action, nested[0].delayMs, nested[0].reason], ['retry', 1, 'KV_LOCKED'])
})

test('decideBeforeStrategy and decideAfterStrategy are the two halves of decide with a host strategy', () => {
  assert.equal(rp.decideBeforeStrategy(get, 'KV_LOCKED'), null)
  assert.equal(rp.decideBeforeStrategy(get, 'KV_NOT_MY_VBUCKET').rule, 'always_retry_controlled_backoff')
  assert.equal(rp.decideBeforeStrategy({ ...get, strategy: 'fail_fast' }, 'KV_LOCKED').rule, 'fail_fast')
  const after = rp.decideAfterStrategy({ ...get, elapsedMs: 2400 }, 'KV_LOCKED', 900)
  assert.deepEqual([after.delayMs, after.capped, after.thenCancel, after.rule], [100, true, true, 'custom_strategy'])
  assert.deepEqual(rp.decideAfterStrategy(get, 'KV_LOCKED', 40), rp.decide(get, 'KV_LOCKED', undefined, () => 40))
  assert.equal(rp.decideAfterStrategy(get, 'KV_LOCKED', null).cause, 'strategy_declined')
  assert.throws(() => rp.decideAfterStrategy(get, 'KV_LOCKED', -1), { code: 'invalid_duration', field: 'retryAfterMs' })
})

test('CommonJS require and ESM import give the same API, at the workspace version', { skip: which !== 'native' && 'native package only' }, async () => {
  const require = createRequire(import.meta.url)
  const cjs = require('retrypolicy')
  const esm = await import('retrypolicy')
  assert.equal(esm.default, cjs)
  assert.equal(esm.decide, cjs.decide)
  const exported = Object.keys(cjs).filter((k) => !k.startsWith('_')).sort()
  assert.deepEqual(Object.keys(esm).filter((k) => k !== 'default').sort(), exported)
  const cargo = fs.readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8')
  const workspace = cargo.match(/\[workspace\.package\][^[]*?\nversion\s*=\s*"([^"]+)"/)[1]
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  assert.equal(cjs.version, workspace)
  assert.equal(pkg.version, workspace)
})

test('explain gives the core sentence for a decision', () => {
  const request = { ...upsert, attempts: 7, elapsedMs: 2000 }
  const d = rp.decide(request, 'KV_NOT_MY_VBUCKET')
  assert.equal(rp.explain(request, d),
    'Retry the KV upsert after 500 ms (retry 8 of this request): KV_NOT_MY_VBUCKET is an always-retry reason, so the controlled backoff applies, cut to the 500 ms left before the 2500 ms timeout, after which it is cancelled. [rule always_retry_controlled_backoff; RFC 0049, Retry Orchestration; Controlled Backoff for Always Retry]')
  assert.match(rp.explain(upsert, rp.decide(upsert, 'SOCKET_CLOSED_WHILE_IN_FLIGHT')), /^Do not retry the KV upsert: the KV upsert is not idempotent/)
  assert.throws(() => rp.explain(upsert, { action: 'retry', reason: 'KV_LOCKED', rule: 'nope' }), { code: 'unknown_name', field: 'decision.rule' })
  assert.throws(() => rp.formatDecision({ ...rp.decide(upsert, 'KV_LOCKED'), delayMs: -1 }), { code: 'invalid_duration', field: 'decision.delayMs' })
  assert.throws(() => rp.formatDecision('retry'), { code: 'invalid_type', field: 'decision' })
})

test('mongodb: retry a read once after a network error; pending-token rewrite; withTransaction', () => {
  const d = rp.mongodb.decide({ operation: { name: 'find' } }, { kind: 'network' })
  assert.deepEqual([d.action, d.retryableAs, d.attempts], ['retry', 'read', 1])
  assert.ok(Object.isFrozen(d) && Object.isFrozen(d.labels))
  const second = rp.mongodb.decide({ operation: { name: 'find' }, attempts: 1 }, { kind: 'network' })
  assert.equal(second.action, 'surface')
  assert.equal(rp.mongodb.idempotency({ op: 'updateOne', filter: { _id: 1 }, update: { $inc: { n: 1 } } }).idempotent, false)
  // the caller's documents keep their keys (snake_case, camelCase, `$` paths) both ways
  const rewrite = rp.mongodb.pendingTokenRewrite({ _id: 1, order_id: 7 }, { $inc: { item_count: 1 } }, 't1', false, 'pending_tokens')
  assert.deepEqual(rewrite.step1, { filter: { _id: 1, order_id: 7 }, update: { $addToSet: { pending_tokens: 't1' } }, upsert: false })
  assert.deepEqual(rewrite.step2.update, { $inc: { item_count: 1 }, $pull: { pending_tokens: 't1' } })
  assert.deepEqual(rewrite.cleanupPipeline[1], { $project: { item_count: { $add: ['$item_count', { $size: '$pending_tokens' }] } } })
  const dup = rp.mongodb.duplicateKey({ order_id: 7 }, { code: 11000, keyPattern: { _id: 1 }, keyValue: { _id: { order_id: 7 } } })
  assert.deepEqual([dup.firstAttemptSucceeded, dup.rule], [true, 'same_id_already_inserted'])
  const hazard = rp.mongodb.idempotency({ op: 'updateOne', filter: { _id: 1 }, update: { $set: { 'line_items.0.qty': 2 } }, uniqueFields: ['_id'] }).hazards[0]
  assert.deepEqual([hazard.arrayPath, hazard.suggestedPath], ['line_items', 'line_items.$.qty'])
  assert.deepEqual(rp.mongodb.transactionLabels('commit', { kind: 'network' }).labels, ['UnknownTransactionCommitResult'])
  const txn = rp.mongodb.withTransaction([{ event: 'begin' }, { event: 'callback_returned', session: 'in_progress' }, { event: 'commit_succeeded' }])
  assert.deepEqual(txn.actions, ['start_transaction', 'commit', 'return'])
  assert.deepEqual(txn.state, { csot: false, phase: 'done', timeoutMs: 120_000, transactionAttempt: 1 })
  const { state } = rp.mongodb.withTransaction([{ event: 'begin' }]) // a returned state goes back in as it is
  const step = rp.mongodb.transactionStep(state, { event: 'callback_returned', session: 'in_progress' })
  assert.deepEqual([step.action.action, step.state.phase], ['commit', 'committing'])
})

test('http: classes, Retry-After in seconds and as a date, and the bounded loop', () => {
  assert.equal(rp.http.classify(503).outcome, 'transient')
  assert.equal(rp.http.classify(404).outcome, 'final')
  assert.equal(rp.http.classify(undefined, true).outcome, 'transient')
  assert.equal(rp.http.retryAfter('120').delayMs, 120_000)
  assert.equal(rp.http.parseDate('Sun, 06 Nov 1994 08:49:37 GMT').unixMs, 784111777000)
  assert.equal(rp.http.retryAfter('Sun, 06 Nov 1994 08:49:47 GMT', 784111777000).delayMs, 10_000)
  assert.equal(rp.http.classify(503).retryReason, 'SERVICE_RESPONSE_CODE_INDICATED')
  const next = rp.http.nextStep({ maxAttempts: 3 }, { attempts: 1, elapsedMs: 0 }, { kind: 'response', status: 503, retryAfter: '2' })
  assert.deepEqual([next.action, next.delayMs, next.fromRetryAfter, next.retryAfterMs], ['retry', 2000, true, 2000])
  assert.throws(() => rp.http.retryAfter('1.5'), { code: 'out_of_range' })
})
