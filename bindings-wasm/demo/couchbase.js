// Couchbase: one decision (a retry reason, or a response code the engine classifies first) and a
// whole schedule: a run of the core's run machine with RFC 0049's rules (`run`, as a binding's
// retry loop drives it) under a failure pattern, through the budget and breaker the panel sets.
import { api, draws, GUARD_CONTROLS, inputError, num, runGuards, show, value } from './engine.js'
import { stepSignals } from './observe.js'
import { MAX_ATTEMPTS, replay, runSchedule } from './run.js'
import { showRun } from './timeline.js'

const PATTERNS = {
  temporary: { outcomes: ['KV_TEMPORARY_FAILURE'], repeat: true },
  'temporary-once': { outcomes: ['KV_TEMPORARY_FAILURE', null], repeat: false },
  'closed-once': { outcomes: ['SOCKET_CLOSED_WHILE_IN_FLIGHT', null], repeat: false },
  'nmvb-storm': { outcomes: ['KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET',
    'KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET', null], repeat: false },
  'locked-3': { outcomes: ['KV_LOCKED', 'KV_LOCKED', 'KV_LOCKED', null], repeat: false }
}

// The core's wire fields, as its errors name them, and the form controls that hold them.
const CONTROLS = {
  status: 'status', code: 'status', http_status: 'status', message: 'body', body: 'body',
  'request.attempts': 'attempts', 'request.elapsed_ms': 'elapsed', 'request.timeout_ms': 'timeout', latency_ms: 'latency'
}

function request () {
  const service = value('service')
  const r = { service, attempts: num('attempts'), elapsed_ms: num('elapsed'), timeout_ms: num('timeout'), random: Number(value('random')) }
  if (service === 'kv') r.operation = value('operation')
  if (service === 'query' || service === 'analytics') r.readonly = value('readonly')
  if (service === 'cluster_manager' || service === 'management') r.method = value('method')
  return r
}

function policy () {
  return { strategy: value('strategy'), jitter: value('jitter') }
}

// A decimal code goes as a number; anything else (0x-hex for KV) as text, which the engine parses.
function statusValue (text) {
  const t = text.trim()
  return /^\d+$/.test(t) ? Number(t) : t
}

function classifyResponse () {
  const service = value('service')
  const status = statusValue(value('status'))
  const body = value('body')
  switch (service) {
    case 'kv': return api('classify_kv', { operation: value('operation'), status }, CONTROLS)
    case 'query': return api('classify_query', { code: status, message: body }, CONTROLS)
    case 'analytics': return api('classify_analytics', { code: status }, CONTROLS)
    case 'search': return api('classify_search', { http_status: status }, CONTROLS)
    case 'views': return api('classify_views', { http_status: status, body }, CONTROLS)
    default: throw inputError('failure', `the engine has no response-code classifier for ${service}: give a retry reason`)
  }
}

/** The decision panel for Couchbase. */
export function decideCouchbase () {
  let reason = value('reason')
  let classified = ''
  if (value('failure') === 'status') {
    const c = classifyResponse()
    classified = `${c.reason ?? 'no retry reason'} (rule ${c.rule}${c.surface_as ? `; surface as ${c.surface_as}` : ''})`
    if (c.reason === null) {
      show({ action: 'no_retry', label: 'no retry', delay: '', sentence: `This response is not sent to retry handling: rule ${c.rule}.`, rule: c.rule, section: c.section, classified, json: c })
      return
    }
    reason = c.reason
  }
  const { decision, sentence } = api('explain', { request: request(), reason, policy: policy() }, CONTROLS)
  show({
    action: decision.action,
    label: decision.action === 'retry' ? 'retry' : 'no retry',
    delay: decision.action === 'retry' ? `after ${decision.delay_ms} ms${decision.capped ? ' (capped)' : ''}${decision.then_cancel ? ', then cancel' : ''}` : `(${decision.cause.replaceAll('_', ' ')})`,
    sentence,
    rule: decision.rule,
    section: decision.section,
    classified,
    json: decision
  })
}

// The schedule's run: its configuration's fields, and the budget's and breaker's.
const RUN_CONTROLS = { 'run.timeout_ms': 'timeout', ...GUARD_CONTROLS }

// The operation as the run's rules take it (the request's own fields).
function operation () {
  const { service, operation, readonly, method } = request()
  return { service, ...(operation !== undefined ? { operation } : {}), ...(readonly !== undefined ? { readonly } : {}), ...(method !== undefined ? { method } : {}) }
}

/**
 * The schedule panel for Couchbase: the core's run machine over the chosen pattern (each attempt
 * fails with the pattern's next reason, or succeeds), and what OpenTelemetry would record for each
 * attempt.
 */
export function scheduleCouchbase () {
  const pattern = PATTERNS[value('pattern')]
  const timeout = num('timeout')
  const jittered = value('jitter') !== 'none'
  const random = draws(64)
  const input = { run: { rules: { decide: { operation: operation(), policy: policy() } }, timeout_ms: timeout }, ...runGuards() }
  // Attempt n's reason (null: success): the pattern's n-th, or its last again when it repeats.
  const reasonOf = (n) => pattern.outcomes[Math.min(n - 1, pattern.outcomes.length - 1)]
  const host = {
    latency: num('latency'),
    // Past the end of a pattern that does not repeat (it ends in a success), no attempt goes.
    outcome: (n) => {
      if (n > pattern.outcomes.length && !pattern.repeat) return null
      const reason = reasonOf(n)
      return reason === null ? { kind: 'success' } : { kind: 'reason', reason }
    },
    random: jittered ? (n) => random[(n - 1) % random.length] : undefined
  }
  const run = replay((i) => api('run', i, RUN_CONTROLS), input, host)
  const schedule = runSchedule(run, (n) => reasonOf(n) ?? 'success', (step) => stepSignals(step))
  const { last } = schedule
  const clock = run.events[run.events.length - 1].at_ms
  const n = run.answer.attempts_sent
  const attempts = `${n} attempt${n === 1 ? '' : 's'}`
  const ending = last.action === 'send'
    ? `the page stops at ${MAX_ATTEMPTS} attempts (${clock} ms): the core asks for another`
    : `${last.end.replace('_', ' ')} after ${attempts}: ${clock} ms in all, ${run.answer.stats.waited_ms} ms waiting (rule ${last.rule}; timeout ${timeout} ms)`
  showRun(schedule, run.answer.stats, { limit: { at: timeout, label: `timeout ${timeout} ms` }, ending })
  return last.end ?? 'none'
}
