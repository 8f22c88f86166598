// gRPC hedging (gRFC A6): a hedged call under the hedgingPolicy the user edits, each attempt
// answering as the script says, driven step by step through the core's `grpc_hedge` (the package's
// `grpc.hedge`, over the wasm module's typed gRPC API). The page plays the host: it keeps the clock
// and the attempts out, tells the core each event in time order (the hedging delay ran out, an
// attempt ended), and does what each step says (send, wait for the next hedge, cancel the others,
// stop). Then the same answers under a retryPolicy (`grpc.retry`), one attempt after another, for
// comparison. Every decision and its rule is the core's.
import { grpc } from '../browser.mjs'
import { $, inputError, items, loose, value, withControl } from './engine.js'
import { drawTimeline, fillTable, svgEl } from './timeline.js'

/** The most events a hedged call replays (the core's cap on maxAttempts keeps a call far below it). */
const MAX_EVENTS = 200

// The core's fields, as its typed errors name them, and the controls holding them.
const CONTROLS = [
  [/^hedgingPolicy\.maxAttempts|^maxAttemptsCap/, 'g_max_attempts'],
  [/^hedgingPolicy\.hedgingDelay/, 'g_delay'],
  [/^(hedgingPolicy\.nonFatalStatusCodes|retryPolicy\.retryableStatusCodes)/, 'g_non_fatal'],
  [/^(event|attempt)\b/, 'g_script'],
  [/^retryPolicy\.initialBackoff/, 'g_initial'],
  [/^retryPolicy\.maxBackoff/, 'g_max_backoff'],
  [/^retryPolicy\.backoffMultiplier/, 'g_multiplier'],
  [/^retryPolicy\.maxAttempts/, 'g_max_attempts'],
  [/^random/, 'g_random']
]
const controlOf = (f) => CONTROLS.find(([re]) => re.test(f))?.[1]

// The status codes listed in `name`: names as written, numbers as numbers.
const codes = (name) => items(name).map((c) => (/^\d+$/.test(c) ? Number(c) : c))

/**
 * The script: one answer per attempt, in the order they are sent: `STATUS after MS` (MS after the
 * attempt was sent), `STATUS pushback=VALUE after MS` (the grpc-retry-pushback-ms trailer as sent),
 * or `no answer`. Each status is read by the core up front (`grpc.retry` without a policy reads the
 * attempt and answers `ok` or `no_retry_policy`), so a bad one is refused even for an attempt that
 * is cancelled before it answers.
 */
export function script () {
  const answers = items('g_script').map((text) => {
    if (/^no answer$/i.test(text)) return { text, after: null }
    const m = /^(\S+)(?:\s+pushback=(\S*))?\s+after\s+(\d+)$/i.exec(text)
    if (!m) throw inputError('g_script', `"${text}" is not an answer: give STATUS after MS (UNAVAILABLE after 620), STATUS pushback=MS after MS, or no answer`)
    const attempt = { status: /^\d+$/.test(m[1]) ? Number(m[1]) : m[1], ...(m[2] === undefined ? {} : { pushback: [m[2]] }) }
    withControl(() => grpc.retry(null, { attempts: 1 }, attempt), () => 'g_script')
    return { text, attempt, after: Number(m[3]) }
  })
  if (answers.length === 0) throw inputError('g_script', 'give at least one answer')
  return answers
}

// The hedgingPolicy of the form, validated by the core (errors name `hedgingPolicy.<field>`).
function hedgingPolicy () {
  return withControl(() => new grpc.HedgingPolicy({
    maxAttempts: loose('g_max_attempts'), hedgingDelay: String(value('g_delay')).trim(), nonFatalStatusCodes: codes('g_non_fatal')
  }), controlOf)
}

// An attempt's answer as the table shows it.
const answerText = (a) => `${a.attempt.status}${a.attempt.pushback ? `, pushback ${a.attempt.pushback[0] === '' ? '(empty)' : a.attempt.pushback[0]}` : ''}`

/**
 * Replays the hedged call: `policy` a grpc.HedgingPolicy, `answers` the script. Returns the
 * attempts ({ n, sent, ended, cancelled, answer, rule }), the table's rows, the hedge_due times,
 * the last step and the clock.
 */
export function hedgedCall (policy, answers) {
  const attempts = []
  const rows = []
  const dues = []
  let timer = null
  let clock = 0
  let state = null
  let last = null
  const out = () => attempts.filter((a) => a.ended === undefined && a.cancelled === undefined)
  const step = (event, eventText) => {
    last = withControl(() => grpc.hedge(policy, state, event), controlOf)
    state = last.state
    const done = []
    const sent = []
    for (let i = 0; i < last.send; i++) {
      const n = attempts.length + 1
      attempts.push({ n, sent: clock, answer: answers[n - 1] })
      sent.push(`#${n}`)
    }
    if (last.send > 0) done.push(`send ${sent.join(', ')}`)
    // A step's wait replaces any earlier one; none: no hedge is due.
    timer = last.nextHedgeInMs === null ? null : clock + last.nextHedgeInMs
    if (timer !== null) done.push(`next hedge at ${timer} ms`)
    if (last.cancelOthers) {
      const cancelled = out()
      for (const a of cancelled) a.cancelled = clock
      done.push(`cancel ${cancelled.map((a) => `#${a.n}`).join(', ')}`)
    }
    if (last.end) done.push(last.end === 'succeeded' ? 'the call succeeded' : `the call failed with ${last.status}`)
    rows.push([rows.length + 1, clock, eventText, done.join('; ') || 'nothing', last.rule])
  }
  step('start', 'start')
  while (!state.done && rows.length < MAX_EVENTS) {
    // The next event: the earliest answer of an attempt out (the lower number first on a tie),
    // or the hedge timer; an answer that arrives at the timer's ms is told first.
    const next = out().filter((a) => a.answer && a.answer.after !== null)
      .sort((a, b) => a.sent + a.answer.after - (b.sent + b.answer.after) || a.n - b.n)[0]
    const at = next && next.sent + next.answer.after
    if (next && (timer === null || at <= timer)) {
      clock = at
      next.ended = at
      step({ event: 'attempt_ended', attempt: next.answer.attempt }, `#${next.n} answered ${answerText(next.answer)}`)
      next.rule = last.rule
    } else if (timer !== null) {
      clock = timer
      dues.push(timer)
      step('hedge_due', 'hedging delay ran out')
    } else {
      break
    }
  }
  return { attempts, rows, dues, last, clock }
}

// What each attempt's bar shows: its outcome (the core's rule for its answer) and colour.
function outcome (a) {
  if (a.cancelled !== undefined) return { kind: 'cancelled', fill: 'var(--wait)', text: 'cancelled', end: a.cancelled }
  if (a.ended === undefined) return { kind: 'pending', fill: 'var(--muted)', text: 'no answer yet', end: null }
  const status = a.answer.attempt.status
  if (a.rule === 'ok') return { kind: 'ok', fill: 'var(--ok)', text: `${status}: the call's answer`, end: a.ended }
  if (a.rule === 'fatal_status') return { kind: 'fatal', fill: 'var(--no)', text: `${status}: fatal, ends the call`, end: a.ended }
  return { kind: 'failed', fill: 'var(--fail)', text: answerText(a.answer), end: a.ended }
}

const LANE = 24
// An attempt's label needs about this much room (11 px text, capitals ~7 px a character).
const room = (text) => 7 * text.length + 8

// One lane per attempt: its bar from sent to its answer or its cancellation (to the end of the
// drawing while it has no answer), its number at the left, what became of it beside the bar; a
// dashed line where the hedging delay ran out.
function drawHedges ({ attempts, dues, clock }) {
  const svg = $('hedge-chart')
  const W = Math.max(svg.clientWidth, 280)
  const top = 8
  const axis = top + LANE * attempts.length + 4
  const H = axis + 30
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`)
  svg.style.height = `${H}px`
  const left = 30; const right = 10
  const end = Math.max(clock, 1)
  const x = (ms) => left + (ms / end) * (W - left - right)
  const items = [svgEl('line', { class: 'axis', x1: left, x2: W - right, y1: axis, y2: axis, stroke: '#9aa5b1' })]
  for (const at of dues) items.push(svgEl('line', { class: 'due', x1: x(at), x2: x(at), y1: top - 4, y2: axis, stroke: 'var(--att)', 'stroke-dasharray': '3 3' }))
  attempts.forEach((a, i) => {
    const o = outcome(a)
    const y = top + i * LANE
    const to = o.end ?? clock
    const bar = svgEl('rect', {
      class: `hedge ${o.kind}`, x: x(a.sent), y: y + 3, width: Math.max(x(to) - x(a.sent), 3), height: LANE - 8, fill: o.fill,
      'data-n': a.n, 'data-sent': a.sent, 'data-end': o.end ?? '', 'data-outcome': o.kind
    })
    const how = o.kind === 'cancelled' ? `cancelled at ${a.cancelled} ms` : o.kind === 'pending' ? 'still out: the script gives it no answer'
      : `answered ${answerText(a.answer)} at ${a.ended} ms (rule ${a.rule})`
    bar.append(svgEl('title', {}, `attempt ${a.n}: sent at ${a.sent} ms, ${how}`))
    items.push(bar)
    items.push(svgEl('text', { class: 'lane', x: 4, y: y + 15, 'font-size': 11, fill: '#5b6673' }, `#${a.n}`))
    // What became of it: after the bar if it fits, else before it, else in it, else left out
    // (the bar's title and the table say it).
    const w = room(o.text)
    const place = x(to) + 4 + w <= W - 2 ? [x(to) + 4, 'start']
      : x(a.sent) - 4 - w >= left ? [x(a.sent) - 4, 'end']
        : x(to) - x(a.sent) >= w + 4 ? [x(a.sent) + 4, 'start'] : null
    if (place) items.push(svgEl('text', { class: 'outcome', x: place[0], y: y + 15, 'font-size': 11, fill: 'var(--fg)', 'text-anchor': place[1] }, o.text))
  })
  items.push(svgEl('text', { x: left, y: axis + 14, 'font-size': 11, fill: '#5b6673' }, '0 ms'))
  items.push(svgEl('text', { x: W - right, y: axis + 14, 'font-size': 11, fill: '#5b6673', 'text-anchor': 'end' }, `${end} ms`))
  svg.replaceChildren(...items)
}

const list = (attempts) => attempts.map((a) => `#${a.n}`).join(', ')

function ending ({ attempts, last, clock }) {
  const cancelled = attempts.filter((a) => a.cancelled !== undefined)
  const also = cancelled.length ? `; ${list(cancelled)} cancelled` : ''
  const sent = `${attempts.length} attempt${attempts.length === 1 ? '' : 's'} sent`
  if (last.end === 'succeeded') {
    const winner = attempts.find((a) => a.rule === 'ok')
    return `Succeeded at ${clock} ms: #${winner.n}'s ${winner.answer.attempt.status} is the call's answer${also}. ${sent} (rule ${last.rule}).`
  }
  if (last.end === 'failed') return `Failed at ${clock} ms with ${last.status}${also}. ${sent} (rule ${last.rule}).`
  const pending = attempts.filter((a) => a.ended === undefined && a.cancelled === undefined)
  return `At ${clock} ms the call still waits on ${list(pending)}: the script gives ${pending.length === 1 ? 'it' : 'them'} no answer. ${sent} (last rule ${last.rule}).`
}

/** The hedging panel: the timeline of the hedged call, its steps and how it ended. */
export function hedgePanel () {
  const answers = script()
  const policy = hedgingPolicy()
  const call = hedgedCall(policy, answers)
  drawHedges(call)
  fillTable(['#', 'at ms', 'event', 'the core\'s answer', 'rule'], call.rows, { id: 'hedge-steps' })
  // The validated policy's maxAttempts: the core caps it at the client's cap (A6: 5).
  const typed = loose('g_max_attempts')
  const capped = policy.maxAttempts === typed ? '' : ` maxAttempts ${typed} is read as ${policy.maxAttempts}, the client's cap.`
  $('hedge-ending').textContent = ending(call) + capped
  return call.last.rule
}

/**
 * The comparison panel: the same answers under a retryPolicy with the hedging policy's
 * maxAttempts and its nonFatalStatusCodes as retryableStatusCodes, one attempt after another,
 * each wait the core's (`grpc.retry`, A6's default ±20 % jitter with the one draw).
 */
export function retryPanel () {
  const answers = script()
  const policy = withControl(() => new grpc.RetryPolicy({
    maxAttempts: loose('g_max_attempts'),
    initialBackoff: String(value('g_initial')).trim(),
    maxBackoff: String(value('g_max_backoff')).trim(),
    backoffMultiplier: loose('g_multiplier'),
    retryableStatusCodes: codes('g_non_fatal')
  }), controlOf)
  const random = loose('g_random')
  const bars = []
  const rows = []
  let clock = 0
  let state = { attempts: 1 }
  let d = null
  for (let n = 1; ; n++) {
    const a = answers[n - 1]
    if (!a || a.after === null) {
      rows.push([n, clock, a ? 'no answer' : 'the script has none', 'waits for it', ''])
      break
    }
    const sent = clock
    clock += a.after
    d = withControl(() => grpc.retry(policy, { ...state, elapsedMs: clock }, a.attempt, { random }), controlOf)
    bars.push({ kind: 'attempt', start: sent, end: clock, ok: d.action === 'succeeded', label: n, note: `${answerText(a)}: ${d.action} (rule ${d.rule})` })
    rows.push([n, sent, answerText(a), d.action === 'retry' ? `retry after ${d.delayMs} ms` : d.action, d.rule])
    if (d.action !== 'retry') break
    bars.push({ kind: 'wait', start: clock, end: clock + d.delayMs, note: `before attempt ${n + 1} (rule ${d.rule})` })
    clock += d.delayMs
    // The state the decision hands on (no deadline here: the call has none).
    const { attempts, retries, retriesSincePushback } = d.next
    state = { attempts, retries, retriesSincePushback }
  }
  drawTimeline({ bars, start: 0 }, { svg: 'grpc-retry-chart', note: 'grpc-retry-note' })
  fillTable(['#', 'sent ms', 'answer', 'decision', 'rule'], rows, { id: 'grpc-retry-steps' })
  const n = rows.length
  $('grpc-retry-ending').textContent = d === null || d.action === 'retry'
    ? `At ${clock} ms attempt ${n} waits: the script gives it no answer.`
    : `${d.action === 'succeeded' ? 'Succeeded' : 'Failed'} at ${clock} ms after ${n} attempt${n === 1 ? '' : 's'}, one at a time (rule ${d.rule}).`
  return d?.rule ?? 'waits'
}

