// Couchbase: one decision (a retry reason, or a response code the engine classifies first) and a
// whole schedule replayed by the core's `simulate` under a failure pattern.
import { api, draws, inputError, num, show, value } from './engine.js'
import { drawTimeline, fillTable, setEnding } from './timeline.js'

const PATTERNS = {
  temporary: { outcomes: ['KV_TEMPORARY_FAILURE'], repeat: true },
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

const ENDINGS = { succeeded: 'succeeded', failed: 'failed (not retried)', timed_out: 'timed out', attempt_limit: 'stopped at the attempt limit' }

/** The schedule panel for Couchbase: the core's `simulate` over the chosen pattern. */
export function scheduleCouchbase () {
  const pattern = PATTERNS[value('pattern')]
  const r = request()
  delete r.random
  const t = api('simulate', {
    request: r, outcomes: pattern.outcomes, repeat_last: pattern.repeat, latency_ms: num('latency'), draws: draws(64), policy: policy()
  }, CONTROLS)
  const bars = []
  t.steps.forEach((s, i) => {
    bars.push({ kind: 'attempt', start: s.sent_at_ms, end: s.done_at_ms, ok: s.reason === null, label: s.attempt })
    const d = s.decision
    if (d && d.action === 'retry') {
      const next = t.steps[i + 1]
      bars.push({ kind: 'wait', start: s.done_at_ms, end: next ? next.sent_at_ms : s.done_at_ms + d.delay_ms })
    }
  })
  drawTimeline({ bars, start: r.elapsed_ms, limit: { at: r.timeout_ms, label: `timeout ${r.timeout_ms} ms` } })
  const n = t.steps.length
  setEnding(`${ENDINGS[t.ending]} after ${n} attempt${n === 1 ? '' : 's'}: ${t.total_ms} ms in all, ${t.waited_ms} ms waiting (timeout ${r.timeout_ms} ms)`)
  fillTable(['#', 'sent ms', 'outcome', 'decision', 'wait ms'], t.steps.map((s) => {
    const d = s.decision
    const decision = !d ? 'success' : d.action === 'retry' ? `retry (${d.rule})${d.then_cancel ? ', then cancel' : ''}` : `fail (${d.rule})`
    return [s.attempt, s.sent_at_ms, s.reason ?? 'success', decision, d && d.action === 'retry' ? d.delay_ms : '']
  }))
  return t.ending
}
