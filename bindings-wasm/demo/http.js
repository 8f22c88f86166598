// HTTP: one `http_next` decision, and a whole schedule: a run of the core's run machine with the
// HTTP rules (`run`, as `retryFetch` drives it), each result the user picked being one attempt's
// outcome. The page only keeps the clock: each attempt takes the latency, each wait the core's
// delay (run.js).
import { api, GUARD_CONTROLS, inputError, items, num, runGuards, show, value } from './engine.js'
import { stepSignals } from './observe.js'
import { MAX_ATTEMPTS, replay, runSchedule } from './run.js'
import { showRun } from './timeline.js'

// The core's wire fields, as its errors name them, and the form controls that hold them, for one
// decision (`http_next`: the loop's, the state's and the attempt's fields).
const LOOP = {
  max_attempts: 'max_attempts', 'loop.max_attempts': 'max_attempts', deadline_ms: 'timeout', 'loop.deadline_ms': 'timeout',
  'state.attempts': 'attempts', 'state.elapsed_ms': 'elapsed'
}
const DECISION = { ...LOOP, http_status: 'http_status', status: 'http_status', 'attempt.status': 'http_status', retry_after: 'retry_after', 'attempt.retry_after': 'retry_after' }
// In the schedule's run: its configuration, the budget and breaker, and the picked results.
const SCHEDULE = { 'run.max_attempts': 'max_attempts', 'run.timeout_ms': 'timeout', ...GUARD_CONTROLS }
const resultsControl = (e) => /^events\[\d+\]\.outcome/.test(e?.field ?? '') ? 'http_results' : undefined

function retryLoop () {
  const method = value('http_method')
  return { max_attempts: num('max_attempts'), deadline_ms: num('timeout'), ...(method ? { method } : {}) }
}

/** The decision panel for HTTP: the core's `http_next` after one attempt. */
export function decideHttp () {
  const kind = value('http_kind')
  const attempt = kind === 'response'
    ? { kind: 'response', status: num('http_status'), ...(value('retry_after').trim() ? { retry_after: value('retry_after').trim() } : {}) }
    : { kind: 'network_error', ...(kind === 'network_refused' ? { sent: false } : {}) }
  const d = api('http_next', {
    loop: retryLoop(),
    state: { attempts: num('attempts') + 1, elapsed_ms: num('elapsed') },
    attempt,
    now_unix_ms: Date.now(),
    random: Number(value('random'))
  }, DECISION)
  show({
    action: d.action,
    label: d.action,
    delay: d.action === 'retry' ? `after ${d.delay_ms} ms${d.from_retry_after ? ' (Retry-After)' : ''}` : `(${d.outcome ?? ''} ${d.class ?? ''})`,
    sentence: d.action === 'retry'
      ? `Retry the request after ${d.delay_ms} ms.`
      : `Stop: the step's outcome is ${d.outcome}.` +
        (d.retry_after_ms != null ? ` The server asked to retry after ${d.retry_after_ms} ms, which reaches the deadline.` : ''),
    rule: d.rule,
    section: d.section ?? '',
    classified: d.class ?? '',
    json: d
  })
}

/** One picked result: `503`, `429 ra=3` (a Retry-After value), `network` or `refused` (not sent). */
export function parseResult (text) {
  if (text === 'network') return { outcome: { kind: 'network' }, text: 'network error' }
  if (text === 'refused') return { outcome: { kind: 'network', sent: false }, text: 'connection refused (not sent)' }
  const m = /^(\d{3})(?:\s+ra=(\S+))?$/.exec(text)
  if (!m) {
    throw inputError('http_results', `"${text}" is not a result: give a status (503), a status with Retry-After (429 ra=3), network or refused`)
  }
  const outcome = { kind: 'http', status: Number(m[1]), ...(m[2] ? { retry_after: m[2] } : {}) }
  return { outcome, text: m[2] ? `${m[1]}, Retry-After: ${m[2]}` : m[1] }
}

function ending (last, attempts, clock, deadline) {
  const n = `${attempts} attempt${attempts === 1 ? '' : 's'}, ${clock} ms`
  if (last.action === 'send') {
    return attempts >= MAX_ATTEMPTS ? `the page stops at ${MAX_ATTEMPTS} attempts (${clock} ms): the core asks for another`
      : `the picked results ran out after ${n}: the core asks for another attempt`
  }
  const asked = last.retry_after_ms != null
    ? `: the server asked to retry after ${last.retry_after_ms} ms (at ${clock + last.retry_after_ms} ms), the deadline is ${deadline} ms`
    : ''
  return `${last.end.replace('_', ' ')} after ${n} (rule ${last.rule})${asked}`
}

/**
 * The schedule panel for HTTP: attempts, waits, the deadline and the server's Retry-After, and
 * what OpenTelemetry would record for each attempt.
 */
export function scheduleHttp () {
  const picked = items('http_results').map(parseResult)
  if (picked.length === 0) throw inputError('http_results', 'pick at least one result')
  const repeat = value('http_repeat')
  const method = value('http_method')
  const deadline = num('timeout')
  const input = { run: { rules: { http: method ? { method } : {} }, max_attempts: num('max_attempts'), timeout_ms: deadline }, ...runGuards() }
  const host = { latency: num('latency'), outcome: (n) => (picked[n - 1] ?? (repeat ? picked[picked.length - 1] : null))?.outcome ?? null }
  const call = (i) => {
    try {
      return api('run', i, SCHEDULE)
    } catch (e) {
      e.control ??= resultsControl(e)
      throw e
    }
  }
  const run = replay(call, input, host)
  const schedule = runSchedule(run, (n) => (picked[n - 1] ?? picked[picked.length - 1]).text, (step) => stepSignals(step, { http: true }))
  const { last } = schedule
  const clock = run.events[run.events.length - 1].at_ms
  const marker = last.action === 'done' && last.retry_after_ms != null
    ? { at: clock + last.retry_after_ms, label: `server: retry at ${clock + last.retry_after_ms} ms` }
    : undefined
  showRun(schedule, run.answer.stats, {
    limit: { at: deadline, label: `deadline ${deadline} ms` },
    marker,
    ending: ending(last, run.answer.attempts_sent, clock, deadline)
  })
  return last.rule
}
