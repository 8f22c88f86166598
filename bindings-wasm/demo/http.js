// HTTP: one `http_next` decision, and a saga step's retry loop driven the way a runner drives it:
// each result the user picked goes to the core's `http_next` with the attempts so far and the time
// since the first attempt started; the core's answer alone says retry (after how long) or stop.
// The page only keeps the clock: each attempt takes the latency, each wait the core's delay.
import { api, inputError, items, num, show, value } from './engine.js'
import { drawTimeline, fillTable, setEnding } from './timeline.js'

// The core's wire fields, as its errors name them, and the form controls that hold them: in one
// decision the attempt's own fields, in the schedule the picked results.
const LOOP = {
  max_attempts: 'max_attempts', 'loop.max_attempts': 'max_attempts', deadline_ms: 'timeout', 'loop.deadline_ms': 'timeout',
  'state.attempts': 'attempts', 'state.elapsed_ms': 'elapsed'
}
const DECISION = { ...LOOP, http_status: 'http_status', status: 'http_status', 'attempt.status': 'http_status', retry_after: 'retry_after', 'attempt.retry_after': 'retry_after' }
const SCHEDULE = { ...LOOP, http_status: 'http_results', status: 'http_results', 'attempt.status': 'http_results', retry_after: 'http_results', 'attempt.retry_after': 'http_results' }

function retryLoop () {
  const method = value('http_method')
  return { max_attempts: num('max_attempts'), deadline_ms: num('timeout'), ...(method ? { method } : {}) }
}

function decisionText (d) {
  if (d.action === 'retry') return `retry after ${d.delay_ms} ms (${d.rule})`
  const asked = d.retry_after_ms != null ? `; the server asked for ${d.retry_after_ms} ms` : ''
  return `stop, ${d.outcome} (${d.rule})${asked}`
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
  if (text === 'network') return { attempt: { kind: 'network_error' }, text: 'network error' }
  if (text === 'refused') return { attempt: { kind: 'network_error', sent: false }, text: 'connection refused (not sent)' }
  const m = /^(\d{3})(?:\s+ra=(\S+))?$/.exec(text)
  if (!m) {
    throw inputError('http_results', `"${text}" is not a result: give a status (503), a status with Retry-After (429 ra=3), network or refused`)
  }
  const attempt = { kind: 'response', status: Number(m[1]), ...(m[2] ? { retry_after: m[2] } : {}) }
  return { attempt, text: m[2] ? `${m[1]}, Retry-After: ${m[2]}` : m[1] }
}

// A runner's bound on a repeated result, so a long deadline cannot hang the page.
const MAX_ATTEMPTS = 400

function runLoop () {
  const picked = items('http_results').map(parseResult)
  if (picked.length === 0) throw inputError('http_results', 'pick at least one result')
  const repeat = value('http_repeat')
  const loop = retryLoop()
  const latency = num('latency')
  const rows = []; const bars = []
  let clock = 0; let previous; let d = null
  while (rows.length < MAX_ATTEMPTS) {
    const r = picked[rows.length] ?? (repeat ? picked[picked.length - 1] : null)
    if (r === null) break
    const sent = clock
    clock += latency
    const state = { attempts: rows.length + 1, elapsed_ms: clock, ...(previous !== undefined ? { previous_delay_ms: previous } : {}) }
    d = api('http_next', { loop, state, attempt: r.attempt }, SCHEDULE)
    bars.push({ kind: 'attempt', start: sent, end: clock, ok: d.class === 'success', label: rows.length + 1 })
    rows.push([rows.length + 1, sent, r.text, decisionText(d), d.action === 'retry' ? d.delay_ms : ''])
    if (d.action !== 'retry') break
    bars.push({ kind: 'wait', start: clock, end: clock + d.delay_ms })
    clock += d.delay_ms
    previous = d.delay_ms
  }
  return { rows, bars, d, clock, loop }
}

function ending ({ rows, d, clock, loop }) {
  const n = `${rows.length} attempt${rows.length === 1 ? '' : 's'}, ${clock} ms`
  if (d === null || d.action === 'retry') return `the picked results ran out after ${n}: the core asks for another attempt`
  if (d.outcome === 'final') return `${d.class === 'success' ? 'succeeded' : `final ${d.class}`} after ${n} (rule ${d.rule})`
  const asked = d.retry_after_ms != null
    ? `: the server asked to retry after ${d.retry_after_ms} ms (at ${clock + d.retry_after_ms} ms), the deadline is ${loop.deadline_ms} ms`
    : ''
  return `stopped, transient, after ${n} (rule ${d.rule})${asked}`
}

/** The schedule panel for HTTP: attempts, waits, the deadline and the server's Retry-After. */
export function scheduleHttp () {
  const run = runLoop()
  const { d, clock, loop } = run
  const marker = d && d.action === 'stop' && d.retry_after_ms != null
    ? { at: clock + d.retry_after_ms, label: `server: retry at ${clock + d.retry_after_ms} ms` }
    : undefined
  drawTimeline({ bars: run.bars, start: 0, limit: { at: loop.deadline_ms, label: `deadline ${loop.deadline_ms} ms` }, marker })
  setEnding(ending(run))
  fillTable(['#', 'sent ms', 'result', 'decision', 'wait ms'], run.rows)
  return d?.rule ?? 'none'
}
