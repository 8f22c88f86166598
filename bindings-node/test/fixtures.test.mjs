// Runs every spec fixture (../spec-fixtures/cases, then SPEC_FIXTURES_DIR) through the public
// API, following spec-fixtures/README.md: one test per case, a failure names the file, the case
// id, and expected vs got; the run ends with "N passed, N failed". Errors compare by `code` and
// `field`, never by message. Binding-agnostic: the API comes from ./binding.mjs.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import rp, { which } from './binding.mjs'
import { camel, millisIn, AS_IS, camelInput, fixtureError, hostStrategy } from './fixture-format.mjs'
import { grpcAwsAdapters, runConfigIn } from './fixtures-grpc-aws.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))
const CORPUS = path.resolve(here, '../../spec-fixtures/cases')

function jsonFiles(dir) {
  const out = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...jsonFiles(p))
    else if (entry.name.endsWith('.json')) out.push(p)
  }
  return out.sort()
}

const snake = (s) => s.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

// JS values → the fixture's JSON conventions: snake_case keys (but under AS_IS keys, given `asIs`),
// big milliseconds as strings.
function wire(v, asIs) {
  if (typeof v === 'bigint') return v > MAX_SAFE ? v.toString() : Number(v)
  if (Array.isArray(v)) return v.map((x) => wire(x, asIs))
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), asIs?.has(snake(k)) ? x : wire(x, asIs)]))
  }
  return v
}

// A MongoDB or HTTP adapter: the input in camelCase, the output back in the fixture's snake_case.
const domain = (adapter) => (i) => wire(adapter(camelInput(i)), AS_IS)

const policyOf = (i) => (i.policy === undefined ? undefined : new rp.Policy(i.policy))
const compatPolicy = (i) => (i.compat === undefined ? undefined : new rp.Policy({ compat: i.compat }))

// ---- budgets and breakers: each fixture's `events` replayed on the public objects ----------------

/** The runner's own reading of a fixture envelope: only `keys`, and `events` present. */
function envelope(i, keys) {
  const extra = Object.keys(i).find((k) => !keys.includes(k))
  if (extra !== undefined) throw fixtureError('unknown_field', extra)
  if (i.events === undefined) throw fixtureError('missing_field', 'events')
  return i.events
}

/** A budget's or breaker's error field as the fixture names it. */
const stateField = (f) => (f === 'nowMs' ? 'at_ms' : f === 'outcome' ? 'kind' : f.replace(/^event\./, ''))

/**
 * The fixture's snapshot for `restore`: an object (a string there is a JSON value of the wrong type
 * in the fixture format, while `restore` reads a string as the snapshot's JSON text).
 */
function snapshotIn(state, field) {
  if (typeof state === 'string') throw fixtureError('invalid_type', field)
  return state
}

/**
 * Each event's envelope read as the JSON API reads the whole input before its first event: an
 * object with `keys` only, `required` there, and its kind (`kind`: the key) one of `names`
 * (`invalid_type` when no string, `unknown_name` when none of them); `check(event)` answers the
 * error code of a key the event's kind does not take, naming `[code, key]`.
 */
function readEvents(events, keys, { kind, names, required = [], check } = {}) {
  // A list of events has no API form but as a list of objects: what the core's reader refuses.
  if (!Array.isArray(events)) throw fixtureError('invalid_type', 'events')
  events.forEach((e, k) => {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw fixtureError('invalid_type', `events[${k}]`)
    const extra = Object.keys(e).find((key) => !keys.includes(key))
    if (extra !== undefined) throw fixtureError('unknown_field', `events[${k}].${extra}`)
    const missing = required.find((key) => e[key] === undefined)
    if (missing !== undefined) throw fixtureError('missing_field', `events[${k}].${missing}`)
    if (kind !== undefined && typeof e[kind] !== 'string') throw fixtureError(e[kind] === undefined ? 'missing_field' : 'invalid_type', `events[${k}].${kind}`)
    if (kind !== undefined && !names.includes(e[kind])) throw fixtureError('unknown_name', `events[${k}].${kind}`)
    const wrong = check?.(e)
    if (wrong !== undefined) throw fixtureError(wrong[0], `events[${k}].${wrong[1]}`)
  })
  return events
}

/** Replays `events` with `apply(event, atMs)`, an API error naming the event (`events[2].at_ms`, `events[2].kind`). */
function replay(events, keys, apply, fieldOf = stateField, envelope = {}) {
  return readEvents(events, keys, envelope).map((e, k) => {
    try {
      return apply(e, millisIn(e.at_ms))
    } catch (err) {
      if (!rp.isRetryPolicyError(err)) throw err
      err.field = `events[${k}].${fieldOf(err.field)}`
      throw err
    }
  })
}

/** `budget_run`: a `retry` event asks tryRetry; any other is recorded, then a retry is asked of permit. */
function budgetRun(i) {
  const events = envelope(i, ['budget', 'state', 'events'])
  const budget = i.state === undefined || i.state === null ? new rp.RetryBudget(i.budget) : rp.RetryBudget.restore(i.budget, snapshotIn(i.state, 'state'))
  const verdicts = replay(events, ['at_ms', 'kind', 'after_retry', 'cause'], (e, at) => {
    if (e.kind === 'retry' && e.after_retry === undefined) return budget.tryRetry(at, e.cause)
    budget.record(at, { kind: e.kind, afterRetry: e.after_retry, cause: e.cause })
    return budget.permit(at, e.kind === 'timeout' ? 'timeout' : 'error')
  }, stateField, { required: ['kind'] })
  const permitted = verdicts.map((v) => v.permitted)
  return wire({ budget: budget.toJSON(), verdicts, permitted, balances: verdicts.map((v) => v.balance), state: budget.snapshot() })
}

/**
 * `breaker_run`: a `request` event asks permit; an outcome is recorded; the state is read after
 * each, and the changes each event made are the ones its 'stateChange' events reported, in order.
 */
function breakerRun(i) {
  const events = envelope(i, ['breaker', 'state', 'events'])
  const breaker = i.state === undefined || i.state === null ? new rp.CircuitBreaker(i.breaker) : rp.CircuitBreaker.restore(i.breaker, snapshotIn(i.state, 'state'))
  const states = []
  const changes = []
  let reported = []
  breaker.on('stateChange', (change) => reported.push(change))
  const verdicts = replay(events, ['at_ms', 'kind'], (e, at) => {
    reported = []
    const verdict = e.kind === 'request' ? breaker.permit(at) : (breaker.record(at, e.kind), null)
    states.push(breaker.state(at))
    changes.push(reported)
    return verdict
  }, stateField, { required: ['kind'] })
  const permitted = verdicts.map((v) => v?.permitted ?? null)
  return wire({ breaker: breaker.toJSON(), verdicts, permitted, states, changes, state: breaker.snapshot() })
}

/** A fixture's run outcome in the API's camelCase (a MongoDB error's keys too). */
const outcomeIn = (o) => (o === undefined ? undefined : camelInput(o))

/**
 * `run`: the events replayed through the public `Run` (camelCase in), then the fixture's summaries
 * in its snake_case (`stats`: the run's; `breaker_changes`: what the breaker's `onStateChange`
 * reported); an API error names its event (`events[1].outcome.status`), a configuration error
 * `run.<field>`.
 */
function runFixture(i) {
  envelope(i, ['run', 'budget', 'budget_state', 'breaker', 'breaker_state', 'host', 'events'])
  const guard = (doc, state, C, name, options) => {
    if (doc === undefined || doc === null) {
      if (state !== undefined && state !== null) throw fixtureError('missing_field', name)
      return undefined
    }
    return state === undefined || state === null ? new C(doc, options) : C.restore(doc, snapshotIn(state, `${name}_state`), options)
  }
  const budget = guard(i.budget, i.budget_state, rp.RetryBudget, 'budget')
  const breakerChanges = []
  const breaker = guard(i.breaker, i.breaker_state, rp.CircuitBreaker, 'breaker', { onStateChange: (c) => breakerChanges.push(c) })
  const strategy = hostStrategy(i)
  let run
  try {
    run = new rp.Run(runConfigIn(i.run), { budget, breaker, strategy })
  } catch (e) {
    if (rp.isRetryPolicyError(e)) e.field = `run.${e.field}`
    throw e
  }
  const steps = replay(i.events, ['event', 'at_ms', 'outcome', 'random', 'now_unix_ms'], (e, at) => {
    switch (e.event) {
      case 'start': return run.start(at, e.random)
      case 'attempt_ended': return run.attemptEnded(outcomeIn(e.outcome), at, e.random, millisIn(e.now_unix_ms))
      case 'wait_ended': return run.waitEnded(at, e.random)
      case 'cancel': return run.cancel(at)
      default: throw fixtureError('out_of_range', 'event')
    }
  }, (f) => f, {
    kind: 'event',
    names: ['start', 'attempt_ended', 'wait_ended', 'cancel'],
    // an outcome belongs to attempt_ended, which needs one (null: not given)
    check: (e) => {
      const has = e.outcome !== undefined && e.outcome !== null
      if (has !== (e.event === 'attempt_ended')) return [has ? 'unknown_field' : 'missing_field', 'outcome']
    },
  })
  const last = steps.at(-1) ?? null
  return wire({
    steps,
    actions: steps.map((s) => s.action),
    delays_ms: steps.filter((s) => s.delayMs !== null).map((s) => s.delayMs),
    rules: steps.map((s) => s.rule),
    end: last?.end ?? null,
    last,
    attempts_sent: run.attemptsSent,
    budget_state: budget?.snapshot() ?? null,
    breaker_state: breaker?.snapshot() ?? null,
    stats: run.stats,
    breaker_changes: breakerChanges,
    signals: steps.map((s) => s.signal),
  })
}

/** The fixture's request (an error in it names `request.<field>`, as the JSON API's does). */
function requestIn(doc) {
  try {
    return rp.requestFromJson(doc)
  } catch (e) {
    if (rp.isRetryPolicyError(e)) e.field = `request.${e.field}`
    throw e
  }
}

/** `decide_with_budget` and `explain_with_budget`: the fixture's verdict passes as it is (its keys are single words). */
const budgeted = (f) => (i) => f(requestIn(i.request), i.reason, policyOf(i), i.budget_verdict ?? undefined)

/** One adapter per fixture function: fixture input → public API call → fixture output keys. */
const ADAPTERS = {
  reason_flags: (i) => wire(rp.reasonFlags(i.reason)),
  is_idempotent: (i) => ({ idempotent: rp.isIdempotent(i) }),
  classify_kv: (i) =>
    wire(rp.classifyKv(i.operation, i.status, { errorMap: i.error_map, policy: compatPolicy(i) })),
  classify_query: (i) => wire(rp.classifyQuery(i.code, i.message, { retry: i.retry, policy: compatPolicy(i) })),
  classify_analytics: (i) => wire(rp.classifyAnalytics(i.code)),
  classify_search: (i) => wire(rp.classifySearch(i.http_status)),
  classify_views: (i) => wire(rp.classifyViews(i.http_status, i.body)),
  classify_dispatch: (i) => wire(rp.classifyDispatch(i.failure)),
  controlled_backoff: (i) => ({ delay_ms: wire(rp.controlledBackoffMs(i.attempt)) }),
  backoff: (i) => {
    const policy = new rp.Policy({ backoff: i.backoff, jitter: i.jitter })
    return { delay_ms: wire(rp.backoffDelayMs(policy, i.attempt, i.random, millisIn(i.previous_delay_ms))) }
  },
  decide: (i) => wire(rp.decide(rp.requestFromJson(i.request), i.reason, policyOf(i))),
  // The host strategy given as data becomes a real strategy function, so the callback path is tested.
  decide_with: (i) => {
    return wire(rp.decide(rp.requestFromJson(i.request), i.reason, policyOf(i), hostStrategy(i)))
  },
  decide_before_strategy: (i) => ({
    decision: wire(rp.decideBeforeStrategy(rp.requestFromJson(i.request), i.reason, policyOf(i))),
  }),
  decide_after_strategy: (i) =>
    wire(rp.decideAfterStrategy(rp.requestFromJson(i.request), i.reason, millisIn(i.retry_after_ms))),
  parse_policy: (i) => ({ policy: new rp.Policy(i.json).toJSON() }),
  explain: (i) => {
    const request = rp.requestFromJson(i.request)
    const decision = rp.decide(request, i.reason, policyOf(i))
    return { sentence: rp.explain(request, decision), decision: wire(decision) }
  },
  // MongoDB and HTTP take and return camelCase; `domain` converts the fixture's documents.
  mongodb_classify_error: domain((i) => rp.mongodb.classifyError(i.error)),
  mongodb_retryable_write_error: domain((i) => rp.mongodb.retryableWriteError(i.error, i.server, i.retryWrites)),
  mongodb_retryable_read_error: domain((i) => rp.mongodb.retryableReadError(i.error)),
  mongodb_surfaced_error: domain((i) => rp.mongodb.surfacedError(i.kind, i.errors)),
  mongodb_eligibility: domain((i) => rp.mongodb.eligibility(i.operation, i.retryWrites, i.retryReads)),
  mongodb_decide: domain((i) => rp.mongodb.decide(i.request, i.error)),
  mongodb_overload_backoff: domain((i) => rp.mongodb.overloadBackoff(i.attempt, i.random, i.baseBackoffMs)),
  mongodb_transaction_labels: domain((i) => rp.mongodb.transactionLabels(i.command, i.error)),
  mongodb_transaction_backoff: domain((i) => rp.mongodb.transactionBackoff(i.transactionAttempt, i.random)),
  mongodb_with_transaction: domain((i) => rp.mongodb.withTransaction(i.events, i.timeoutMs)),
  mongodb_transaction_step: domain((i) => rp.mongodb.transactionStep(i.state, i.event)),
  mongodb_idempotency: domain((i) => rp.mongodb.idempotency(i)),
  mongodb_duplicate_key: domain((i) => rp.mongodb.duplicateKey(i.documentId, i.error)),
  mongodb_pending_token_rewrite: domain((i) => rp.mongodb.pendingTokenRewrite(i.filter, i.update, i.token, i.upsert, i.pendingField)),
  http_classify: domain((i) => rp.http.classify(i.status, i.networkError)),
  http_retry_after: domain((i) => rp.http.retryAfter(i.value, i.nowUnixMs)),
  http_date: domain((i) => rp.http.parseDate(i.value, i.nowUnixMs)),
  http_next: domain((i) => rp.http.nextStep(i.loop, i.state, i.attempt, i.nowUnixMs, i.random, i.budgetVerdict)),
  budget_run: budgetRun,
  run: runFixture,
  breaker_run: breakerRun,
  decide_with_budget: budgeted((...args) => wire(rp.decideWithBudget(...args))),
  explain_with_budget: budgeted((...args) => {
    const { decision, sentence } = rp.explainWithBudget(...args)
    return { sentence, decision: wire(decision) }
  }),
  simulate_storm: (i) =>
    wire(
      rp.simulateStorm({
        request: rp.requestFromJson(i.request),
        reason: i.reason,
        requestsPerSecond: i.requests_per_second,
        durationMs: millisIn(i.duration_ms),
        failureRate: i.failure_rate,
        latencyMs: millisIn(i.latency_ms),
        policy: policyOf(i),
        draws: i.draws,
        budget: i.budget,
        breaker: i.breaker,
      }),
    ),
  // gRPC (gRFC A6) and the AWS SDKs' retry modes through `grpc` and `aws` (./fixtures-grpc-aws.mjs).
  ...grpcAwsAdapters(rp),
  simulate: (i) =>
    wire(
      rp.simulate({
        request: rp.requestFromJson(i.request),
        outcomes: i.outcomes,
        repeatLast: i.repeat_last,
        latencyMs: millisIn(i.latency_ms),
        draws: i.draws,
        policy: policyOf(i),
      }),
    ),
}

// A fixture's `error_field` is a wire path that the error's field contains (`delay_ms` in
// `backoff.delay_ms`); the API names its own arguments in camelCase (`httpStatus`), and a host
// strategy's answer, `host.retry_after_ms` in the fixture, is the strategy's `retryAfter`.
function apiField(fn, f) {
  if (f === undefined) return undefined
  // this runner names the answer's shape (`host.retry_after_ms`), the binding a bad answer
  if (fn === 'decide_with' && f === 'host.retry_after_ms') return ['retryAfter', f]
  if (fn === 'run' && (f === 'host.retry_after_ms' || f === 'retry_after_ms')) return ['retryAfter', f]
  // an event's time is the `nowMs` argument of the API's methods
  if (f === 'at_ms') return ['nowMs', f, camel(f)]
  return [f, camel(f)]
}

// Numbers compare by value; objects and arrays compare whole; a missing key is null.
function same(a, b) {
  if (a === undefined) a = null
  if (b === undefined) b = null
  if (typeof a === 'number' && typeof b === 'number') return a === b
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, k) => same(x, b[k]))
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a)
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && same(a[k], b[k]))
  }
  return a === b
}

/** Runs one case: undefined when it passes, else why not. */
export function check(fn, c) {
  const adapter = ADAPTERS[fn]
  if (adapter === undefined) return `no adapter for fixture function ${JSON.stringify(fn)}`
  let out
  try {
    out = adapter(c.input)
  } catch (e) {
    if (!rp.isRetryPolicyError(e)) return `threw a non-retrypolicy error: ${e && e.stack}`
    if (c.expect_error === undefined) return `unexpected error ${e.code}: ${e.message}`
    if (e.code !== c.expect_error) return `expected error ${c.expect_error}, got ${e.code} (${e.message})`
    const want = apiField(fn, c.error_field)
    if (want !== undefined && !want.some((f) => e.field.includes(f))) {
      return `expected an error field naming ${JSON.stringify(c.error_field)}, got ${JSON.stringify(e.field)}`
    }
    return undefined
  }
  if (c.expect_error !== undefined) return `expected error ${c.expect_error}, got output ${JSON.stringify(out)}`
  if (c.expect === null || typeof c.expect !== 'object') return 'case needs an expect object or an expect_error string'
  for (const [k, want] of Object.entries(c.expect)) {
    if (!same(out[k], want)) {
      return `${k}: expected ${JSON.stringify(want)}, got ${JSON.stringify(out[k] ?? null)} (whole output ${JSON.stringify(out)})`
    }
  }
  return undefined
}

const folders = [CORPUS]
if (process.env.SPEC_FIXTURES_DIR) folders.push(path.resolve(process.env.SPEC_FIXTURES_DIR))

let passed = 0
let failed = 0
after(() => console.log(`${passed} passed, ${failed} failed`))

for (const folder of folders) {
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    test(`fixture folder ${folder}`, () => assert.fail(`SPEC_FIXTURES_DIR ${folder} is not a folder`))
    continue
  }
  for (const file of jsonFiles(folder)) {
    const name = path.relative(path.resolve(here, '../..'), file)
    let doc
    try {
      doc = JSON.parse(fs.readFileSync(file, 'utf8'))
    } catch (e) {
      test(`${name}: readable`, () => assert.fail(`${name}: unreadable: ${e.message}`))
      continue
    }
    if (!Array.isArray(doc.cases)) {
      test(`${name}: cases`, () => assert.fail(`${name}: no cases array`))
      continue
    }
    for (const c of doc.cases) {
      test(`[${which}] ${name}: ${c.id}`, () => {
        const why = check(doc.function, c)
        if (why === undefined) passed++
        else failed++
        if (why !== undefined) assert.fail(`${name}: ${c.id}: ${why}`)
      })
    }
  }
}
