// The fixture runner's typed adapters of gRPC's functions (gRFC A6) and the AWS SDKs' retry modes,
// through the public `grpc` and `aws` namespaces and RetryBudget (never the JSON API), for
// fixtures.test.mjs (the Node package, and the wasm package over the same facade). Each takes the
// case's input and returns the fixture's output keys; errors name fields as the fixture does.
// - grpc_service_config: new grpc.ServiceConfig, then matched / policyFor (its typed fields) / throttling.
// - grpc_retry: new grpc.RetryPolicy and one grpc.retry; a case's retry_throttling is the bucket a
//   service config with that retryThrottling gives (its `throttling` document as a RetryBudget,
//   restored from throttling_state), and throttling_state after the call is the budget's snapshot.
// - grpc_hedge: new grpc.HedgingPolicy, then one grpc.hedge per event, each step's state passed on.
// - aws_retry: new aws.RetryConfig and one aws.decide.
// - aws_retry_run: the SDKs' loop as the JSON API's `aws_retry_run` drives it, here with aws.decide
//   and a RetryBudget quota: a retry is asked of the quota (tryRetry with the decision's cause) and,
//   refused, decided again with its verdict; a success tells the quota what the last retry cost.
// - aws_rate_limiter_run: an aws.AdaptiveRateLimiter fed the events (acquire, record).
// A throttling_state or quota_state without its document, an attempt's keys on the wrong hedging
// event, `start_ms` beside a state and `throttled` on an acquire exist only in the fixture's
// envelope: the adapter refuses them as the JSON API does (fixtureError).
import { camelInput, fixtureError, millisIn } from './fixture-format.mjs'

const snake = (s) => s.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase())
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** An API value in the fixture's form: snake_case keys, bigints as numbers or decimal strings. */
function wire(v) {
  if (typeof v === 'bigint') return v > MAX_SAFE ? v.toString() : Number(v)
  if (Array.isArray(v)) return v.map(wire)
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), wire(x)]))
  return v
}

/** `f()`; an API error it throws renamed by `rename(field)` (a fixture's envelope names its own fields). */
function placed(rp, rename, f) {
  try {
    return f()
  } catch (e) {
    if (rp.isRetryPolicyError(e)) e.field = rename(e.field)
    throw e
  }
}

/** The case's object keys, refusing any other (the JSON API's envelopes refuse unknown fields). */
function only(i, keys) {
  const extra = Object.keys(i).find((k) => !keys.includes(k))
  if (extra !== undefined) throw fixtureError('unknown_field', extra)
  return i
}

/**
 * A list of event objects, each with `keys` only, read as the JSON API reads the whole input
 * before its first event; with `kinds`, each event's `kind` is one of those names (`invalid_type`
 * when no string, `unknown_name` when none of them).
 */
function events(list, keys, kinds, kind = 'kind') {
  if (!Array.isArray(list)) throw fixtureError(list === undefined ? 'missing_field' : 'invalid_type', 'events')
  list.forEach((e, k) => {
    if (e === null || typeof e !== 'object' || Array.isArray(e)) throw fixtureError('invalid_type', `events[${k}]`)
    const extra = Object.keys(e).find((key) => !keys.includes(key))
    if (extra !== undefined) throw fixtureError('unknown_field', `events[${k}].${extra}`)
    if (kinds === undefined) return
    if (typeof e[kind] !== 'string') throw fixtureError(e[kind] === undefined ? 'missing_field' : 'invalid_type', `events[${k}].${kind}`)
    if (!kinds.includes(e[kind])) throw fixtureError('unknown_name', `events[${k}].${kind}`)
  })
  return list
}

/** `{maxAttemptsCap}` of the case (its errors name `max_attempts_cap` camelCase, which the comparison accepts). */
const cap = (i) => ({ maxAttemptsCap: i.max_attempts_cap ?? undefined })

/** The policy's typed fields in the fixture's form (`{kind, max_attempts, ...}`; none: `{kind: 'none'}`). */
const policyOut = (p) => (p === null ? { kind: 'none' } : wire({ ...p }))

/**
 * The throttling bucket of a case: `retry_throttling` read by a grpc.ServiceConfig (errors naming
 * `retry_throttling.<field>`), its budget document a RetryBudget, restored from `throttling_state`.
 */
function throttlingOf(rp, i) {
  if (i.retry_throttling === undefined || i.retry_throttling === null) {
    if (i.throttling_state !== undefined && i.throttling_state !== null) throw fixtureError('missing_field', 'retry_throttling')
    return undefined
  }
  const config = placed(rp, (f) => f.replace(/^retryThrottling/, 'retry_throttling'),
    () => new rp.grpc.ServiceConfig({ retryThrottling: i.retry_throttling }))
  if (i.throttling_state === undefined || i.throttling_state === null) return new rp.RetryBudget(config.throttling)
  return placed(rp, (f) => f.replace(/^state/, 'throttling_state'), () => rp.RetryBudget.restore(config.throttling, i.throttling_state))
}

/** A hedging event of the fixture (`{event, at_ms?, attempt?}`) as grpc.hedge takes it: a name, or `{event, attempt}`. */
function hedgeEvent(e) {
  if (e.attempt === undefined || e.attempt === null) return e.event
  return { event: e.event, attempt: camelInput(e.attempt) }
}

/** The quota of an aws_retry_run case: `quota`, else the retry quota with the behaviour's costs (none in legacy mode). */
function quotaOf(rp, i, config) {
  const doc = i.quota ?? (config.mode === 'legacy' ? null : { kind: 'retry_quota', costs: config.behavior })
  if (doc === null) {
    if (i.quota_state !== undefined && i.quota_state !== null) throw fixtureError('missing_field', 'quota')
    return null
  }
  const named = (f) => f.replace(/^budget/, 'quota').replace(/^state/, 'quota_state')
  if (i.quota_state === undefined || i.quota_state === null) return placed(rp, named, () => new rp.RetryBudget(doc))
  return placed(rp, named, () => rp.RetryBudget.restore(doc, i.quota_state))
}

/** A rate as the fixture's lists give it: to 12 decimal places (the JSON API's `aws_rate_limiter_run`). */
const rounded = (rate) => (typeof rate === 'number' ? Math.round(rate * 1e12) / 1e12 : null)

/** The adapters of the six functions over the API `rp`. */
export function grpcAwsAdapters(rp) {
  /** `aws.RetryConfig` of a case's `config` (none: standard mode's defaults); errors name `config.<field>`. */
  const awsConfig = (doc) => new rp.aws.RetryConfig(doc ?? undefined)

  return {
    grpc_service_config(i) {
      only(i, ['service_config', 'service', 'method', 'max_attempts_cap'])
      if (i.service_config === undefined) throw fixtureError('missing_field', 'service_config')
      const config = placed(rp, (f) => (f === 'maxAttemptsCap' ? f : `service_config.${f}`), () => new rp.grpc.ServiceConfig(i.service_config, cap(i)))
      const service = i.service ?? ''
      const method = i.method ?? ''
      return { matched: config.matched(service, method), policy: policyOut(config.policyFor(service, method)), throttling: config.throttling }
    },

    grpc_retry(i) {
      only(i, ['retry_policy', 'max_attempts_cap', 'state', 'attempt', 'random', 'jitter', 'retry_throttling', 'throttling_state', 'now_ms'])
      const policy = i.retry_policy === undefined || i.retry_policy === null ? null : new rp.grpc.RetryPolicy(i.retry_policy, cap(i))
      const throttling = throttlingOf(rp, i)
      const d = rp.grpc.retry(policy, camelInput(i.state), camelInput(i.attempt), { random: i.random, jitter: i.jitter, throttling, nowMs: millisIn(i.now_ms) })
      return { ...wire(d), throttling_state: throttling?.snapshot() ?? null }
    },

    grpc_hedge(i) {
      only(i, ['hedging_policy', 'max_attempts_cap', 'events', 'retry_throttling', 'throttling_state'])
      const policy = new rp.grpc.HedgingPolicy(i.hedging_policy, cap(i))
      const throttling = throttlingOf(rp, i)
      let state = null
      const kinds = ['start', 'hedge_due', 'attempt_ended', 'committed']
      const steps = events(i.events, ['event', 'at_ms', 'attempt'], kinds, 'event').map((e, k) => {
        // an attempt belongs to attempt_ended, which needs one (null: not given), as the JSON API reads it
        const has = e.attempt !== undefined && e.attempt !== null
        if (has !== (e.event === 'attempt_ended')) throw fixtureError(has ? 'unknown_field' : 'missing_field', `events[${k}].attempt`)
        const step = placed(rp, (f) => `events[${k}].${f.replace(/^event\.(?=attempt)/, '')}`,
          () => rp.grpc.hedge(policy, state, hedgeEvent(e), { throttling, nowMs: millisIn(e.at_ms) }))
        state = step.state
        return step
      })
      const last = steps.at(-1)
      return {
        steps: wire(steps),
        sends: steps.map((s) => s.send),
        rules: steps.map((s) => s.rule),
        end: last?.end ?? null,
        status: last?.status ?? null,
        throttling_state: throttling?.snapshot() ?? null,
      }
    },

    aws_retry(i) {
      only(i, ['config', 'attempts', 'error', 'random', 'budget_verdict'])
      const config = awsConfig(i.config)
      const budgetVerdict = i.budget_verdict === undefined || i.budget_verdict === null ? undefined : camelInput(i.budget_verdict)
      return wire(rp.aws.decide(config, i.attempts, camelInput(i.error), { random: i.random, budgetVerdict }))
    },

    aws_retry_run(i) {
      only(i, ['config', 'quota', 'quota_state', 'events'])
      const config = awsConfig(i.config)
      const quota = quotaOf(rp, i, config)
      const balance = () => quota?.permit(0, 'error').balance ?? null
      let attempts = 0
      let lastCause = null
      const steps = events(i.events, ['error', 'random']).map((e, k) => {
        attempts++
        if (e.error === undefined || e.error === null) {
          // a success's draw, which no call takes, read as the JSON API reads every event's
          const r = e.random
          if (r !== undefined && r !== null && typeof r !== 'number') throw fixtureError('invalid_type', `events[${k}].random`)
          if (typeof r === 'number' && !(r >= 0 && r < 1)) throw fixtureError('invalid_random', `events[${k}].random`)
          quota?.record(0, { kind: 'success', afterRetry: lastCause })
          const step = { attempts, action: 'success', decision: null, quota_balance: balance() }
          attempts = 0
          lastCause = null
          return step
        }
        const decide = (budgetVerdict) => placed(rp, (f) => `events[${k}].${f}`,
          () => rp.aws.decide(config, attempts, camelInput(e.error), { random: e.random, budgetVerdict }))
        let d = decide(undefined)
        if (d.action === 'retry' && quota !== null) {
          const verdict = quota.tryRetry(0, d.cause)
          if (!verdict.permitted) d = decide(verdict)
        }
        const step = { attempts, action: d.action, decision: wire(d), quota_balance: balance() }
        if (d.action === 'retry') lastCause = d.cause
        else [attempts, lastCause] = [0, null]
        return step
      })
      const decided = (key) => steps.map((s) => s.decision?.[key] ?? null)
      return {
        config: config.toJSON(),
        quota: quota?.toJSON() ?? null,
        actions: steps.map((s) => s.action),
        rules: decided('rule'),
        delays_ms: decided('delay_ms'),
        ceilings_ms: decided('ceiling_ms'),
        waits_ms: decided('wait_ms'),
        quota_balances: steps.map((s) => s.quota_balance),
        quota_state: quota?.snapshot() ?? null,
        steps,
      }
    },

    aws_rate_limiter_run(i) {
      only(i, ['limiter', 'state', 'start_ms', 'events'])
      const hasState = i.state !== undefined && i.state !== null
      if (hasState && i.start_ms !== undefined && i.start_ms !== null) throw fixtureError('invalid_type', 'start_ms')
      const limiter = hasState
        ? rp.aws.AdaptiveRateLimiter.restore(i.limiter ?? undefined, i.state)
        : new rp.aws.AdaptiveRateLimiter(i.limiter ?? undefined, millisIn(i.start_ms) ?? undefined)
      const states = []
      const results = events(i.events, ['at_ms', 'kind', 'throttled'], ['acquire', 'response']).map((e, k) => {
        const at = millisIn(e.at_ms)
        const result = placed(rp, (f) => `events[${k}].${f === 'nowMs' ? 'at_ms' : f}`, () => {
          if (e.kind === 'acquire') {
            if (e.throttled !== undefined && e.throttled !== null) throw fixtureError('unknown_field', 'throttled')
            return limiter.acquire(at)
          }
          if (e.kind === 'response') return limiter.record(at, e.throttled ?? false)
          throw fixtureError('unknown_name', 'kind')
        })
        states.push(limiter.snapshot())
        return wire(result)
      })
      const list = (key) => states.map((s) => rounded(s[key]))
      return {
        limiter: limiter.toJSON(),
        acquired: results.map((r) => r.acquired ?? null),
        waits_ms: results.map((r) => r.wait_ms ?? null),
        rules: results.map((r) => r.rule),
        bounds: results.map((r) => r.bound ?? null),
        calculated_rates: results.map((r) => rounded(r.calculated_rate)),
        measured_rates: list('measured_rate'),
        fill_rates: list('fill_rate'),
        max_capacities: list('max_capacity'),
        capacities: list('capacity'),
        enabled: states.map((s) => s.enabled),
        results,
        state: limiter.snapshot(),
      }
    },
  }
}

/**
 * A `run` fixture's configuration in the API's camelCase, the documents its rules hold as the API
 * takes them, as they are: `grpc`'s `retry_policy` (gRPC's own camelCase JSON) and `aws`'s
 * `config` (the shared snake_case form).
 */
export function runConfigIn(run) {
  const config = camelInput(run)
  const aws = run?.rules?.aws
  if (aws !== null && typeof aws === 'object' && aws.config !== undefined && typeof config.rules.aws === 'object') {
    config.rules.aws.config = aws.config
  }
  return config
}
