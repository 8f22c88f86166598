// AWS adaptive mode: the client-side rate limiter (the core's AdaptiveRateLimiter: the SDKs' token
// bucket with its CUBIC rate, through the package's `aws.AdaptiveRateLimiter` over the wasm
// module's typed AWS API) driven by a client that wants to send one attempt every N ms and gets the
// responses the user lists. The page plays the host: before each attempt it asks the limiter for a
// token (`acquire`; told to wait, it asks again after the wait), and tells it each response when it
// arrives (`record`), throttled or not as the core's `aws.decide` classifies the response's error.
// The measured send rate, the fill rate, the throttles and the waits for a token are the core's
// answers; the page keeps the clock and draws them.
import { aws } from '../browser.mjs'
import { $, field, inputError, items, loose, num, withControl } from './engine.js'
import { fillTable, svgEl } from './timeline.js'

/** The most responses one script replays. */
export const MAX_RESPONSES = 2000

// The limiter document's fields and the controls holding them (pre-filled with the core's defaults).
const LIMITER = { min_fill_rate: 'a_min_rate', beta: 'a_beta', scale_constant: 'a_scale', smoothing: 'a_smoothing' }
const controlOf = (f) => {
  const m = /^limiter\.(\w+)/.exec(f)
  if (m) return LIMITER[m[1]]
  return /^error\b/.test(f) ? 'a_script' : undefined
}

/** Pre-fills the limiter's fields with the SDKs' constants, as the core's normalized document says. */
export function fillLimiterDefaults () {
  const doc = new aws.AdaptiveRateLimiter().toJSON()
  for (const [name, control] of Object.entries(LIMITER)) field(control).defaultValue = String(doc[name])
}

/**
 * The responses listed, one per attempt: `ok`, or an error as `STATUS`, `STATUS Code` or `Code`
 * (`503 ThrottlingException`, `429`, `500 InternalError`), each optionally `xN` for N in a row.
 * Whether an error is a throttle is the core's answer (`aws.decide` in adaptive mode: its
 * `throttling`), asked once per distinct error.
 */
function responses () {
  const config = new aws.RetryConfig({ mode: 'adaptive' })
  const classified = new Map()
  const out = []
  for (const item of items('a_script')) {
    const m = /^(.+?)(?:\s+x(\d+))?$/i.exec(item)
    const times = m[2] === undefined ? 1 : Number(m[2])
    const what = m[1].trim()
    if (!classified.has(what)) {
      let response
      if (/^ok$/i.test(what)) {
        response = { text: 'ok', ok: true, throttling: false }
      } else {
        const e = /^(?:(\d+)(?:\s+([A-Za-z][\w.]*))?|([A-Za-z][\w.]*))$/.exec(what)
        if (!e) throw inputError('a_script', `"${what}" is not a response: give ok, a status (429), a status and a code (503 ThrottlingException) or a code, each optionally xN`)
        const error = { ...(e[1] ? { status: Number(e[1]) } : {}), ...(e[2] || e[3] ? { code: e[2] ?? e[3] } : {}) }
        const d = withControl(() => aws.decide(config, 1, error, { random: 0.5 }), controlOf)
        response = { text: what, throttling: d.throttling }
      }
      classified.set(what, response)
    }
    if (out.length + times > MAX_RESPONSES) throw inputError('a_script', `at most ${MAX_RESPONSES} responses, got more`)
    for (let i = 0; i < times; i++) out.push(classified.get(what))
  }
  if (out.length === 0) throw inputError('a_script', 'give at least one response')
  return out
}

/**
 * Replays the client: attempt k (from 0) is wanted at k × `interval` ms, and not before the one
 * before it went; before it goes it asks the limiter for a token (told to wait, it asks again after
 * the wait); its response arrives `latency` ms after it went and is recorded then. Events go to
 * the limiter in time order (a response that arrives at the ms of a token request first).
 * Returns one entry per attempt: { wanted, sent, asked: [verdicts], response, at, update }.
 */
export function replayClient (limiter, list, interval, latency) {
  const attempts = []
  const pending = []
  const recordUpTo = (t) => {
    while (pending.length && pending[0].at <= t) {
      const a = pending.shift()
      a.update = limiter.record(a.at, a.response.throttling)
    }
  }
  let previous = 0
  list.forEach((response, k) => {
    const a = { wanted: k * interval, asked: [], response }
    let at = Math.max(a.wanted, previous)
    for (;;) {
      recordUpTo(at)
      const v = limiter.acquire(at)
      a.asked.push({ at, ...v })
      if (v.acquired) break
      at += v.waitMs
    }
    a.sent = at
    a.at = at + latency
    previous = at
    pending.push(a)
    attempts.push(a)
  })
  recordUpTo(Infinity)
  return attempts
}

const rate = (r) => r.toFixed(3)

// The core's names for the term of the limiter's formula that applied (`rule`, giving
// `calculatedRate`) and for what bounded the fill rate (`bound`), as the table says them.
const RULES = { throttle_beta: 'throttle: β × rate in use', cubic_curve: 'CUBIC curve' }
const BOUNDS = { capped_at_twice_measured: ', capped at 2 × measured', raised_to_min_fill_rate: ', raised to the minimum' }

// What the response did to the rate, in the terms of the core's answer.
function change (u, wasOn) {
  const asked = `${RULES[u.rule]} → ${rate(u.calculatedRate)}`
  const bound = u.bound === null ? '' : BOUNDS[u.bound]
  return `${asked}${bound}${u.enabled && !wasOn ? '; the limiter turns on' : ''}`
}

// The token requests before an attempt, as the table shows them.
function token (asked) {
  const waited = asked.filter((v) => !v.acquired)
  const last = asked[asked.length - 1]
  return waited.length === 0 ? last.rule : `waited ${last.at - asked[0].at} ms (${waited[0].rule}), then ${last.rule}`
}

/** The rate chart's panel: the chart, the table of attempts and the sentence. */
export function ratePanel () {
  const list = responses()
  const interval = num('a_interval')
  const latency = num('a_latency')
  const doc = Object.fromEntries(Object.entries(LIMITER).map(([name, control]) => [name, loose(control)]))
  const limiter = withControl(() => new aws.AdaptiveRateLimiter(doc, 0), controlOf)
  const attempts = replayClient(limiter, list, interval, latency)
  // The rows in the order of the responses (the order of the attempts: one latency for all).
  let on = false
  const rows = attempts.map((a, i) => {
    const kind = a.response.ok ? '' : a.response.throttling ? ' (a throttle)' : ' (not a throttle)'
    const row = [i + 1, a.sent, token(a.asked), `${a.response.text}${kind}`, a.at,
      rate(a.update.measuredRate), rate(a.update.fillRate), change(a.update, on)]
    on = a.update.enabled
    return row
  })
  fillTable(['#', 'sent ms', 'token', 'response', 'answered ms', 'measured /s', 'fill rate /s', 'change'], rows,
    { id: 'rate-steps', numeric: [true, true, false, false, true, true, true, false] })
  drawRates(attempts)
  const throttles = attempts.filter((a) => a.update.throttled)
  const waits = attempts.filter((a) => a.asked.length > 1)
  const waited = waits.reduce((sum, a) => sum + a.sent - a.asked[0].at, 0)
  const firstOn = attempts.find((a) => a.update.enabled)
  const end = attempts[attempts.length - 1]
  $('rate-ending').textContent = `${attempts.length} attempts in ${end.at} ms, ${throttles.length} throttled` +
    (firstOn ? `; the limiter turned on at ${firstOn.at} ms` : '; the limiter stayed off (no throttle)') +
    `; fill rate ${rate(end.update.fillRate)}/s, measured ${rate(end.update.measuredRate)}/s at the end; ` +
    `${waits.length} attempt${waits.length === 1 ? '' : 's'} waited for a token, ${waited} ms in all.`
  return throttles.length
}

const HEIGHT = 190
// Rates over time: the measured send rate and the fill rate after each response (step lines, the
// fill rate dashed while the limiter is off), a dot at each throttle, and a band above the axis
// where an attempt waited for a token.
function drawRates (attempts) {
  const svg = $('rate-chart')
  const W = Math.max(svg.clientWidth, 280)
  svg.setAttribute('viewBox', `0 0 ${W} ${HEIGHT}`)
  svg.style.height = `${HEIGHT}px`
  const left = 10; const right = 14; const top = 26; const bottom = 156
  const end = Math.max(attempts[attempts.length - 1].at, 1)
  const high = Math.max(1, ...attempts.flatMap((a) => [a.update.measuredRate, a.update.fillRate]))
  const x = (ms) => left + (ms / end) * (W - left - right)
  const y = (r) => bottom - (r / high) * (bottom - top)
  // A step line through the responses' values: each holds until the next response.
  const steps = (list, of) => list.map((a, i) => (i === 0 ? `M${x(a.at)} ${y(of(a))}` : `H${x(a.at)} V${y(of(a))}`)).join(' ')
  const split = attempts.findIndex((a) => a.update.enabled)
  const off = split < 0 ? attempts : attempts.slice(0, split)
  const items = [svgEl('line', { class: 'axis', x1: left, x2: W - right, y1: bottom, y2: bottom, stroke: '#9aa5b1' })]
  for (const a of attempts.filter((a) => a.asked.length > 1)) {
    const band = svgEl('rect', { class: 'token-wait', x: x(a.asked[0].at), y: bottom - 7, width: Math.max(x(a.sent) - x(a.asked[0].at), 1), height: 6, fill: 'var(--wait)' })
    band.append(svgEl('title', {}, `attempt ${attempts.indexOf(a) + 1} waited for a token from ${a.asked[0].at} to ${a.sent} ms`))
    items.push(band)
  }
  items.push(svgEl('path', { class: 'measured', d: steps(attempts, (a) => a.update.measuredRate), fill: 'none', stroke: 'var(--ok)', 'stroke-width': 1.5 }))
  if (off.length > 0) {
    items.push(svgEl('path', { class: 'fill-off', d: steps(off, (a) => a.update.fillRate), fill: 'none', stroke: 'var(--att)', 'stroke-width': 1.5, 'stroke-dasharray': '4 3' }))
  }
  if (split >= 0) {
    // From the last value before the limiter turned on (or the first response), so the line is whole.
    const from = attempts.slice(Math.max(split - 1, 0))
    items.push(svgEl('path', { class: 'fill', d: steps(from, (a) => a.update.fillRate), fill: 'none', stroke: 'var(--att)', 'stroke-width': 2 }))
  }
  for (const a of attempts.filter((a) => a.update.throttled)) {
    const dot = svgEl('circle', { class: 'throttle', cx: x(a.at), cy: y(a.update.fillRate), r: 4, fill: 'var(--no)' })
    dot.append(svgEl('title', {}, `throttled at ${a.at} ms: fill rate ${rate(a.update.fillRate)}/s (measured ${rate(a.update.measuredRate)}/s)`))
    items.push(dot)
  }
  items.push(svgEl('text', { x: left, y: 16, 'font-size': 11, fill: '#5b6673' }, `${rate(high)} requests/s (highest)`))
  items.push(svgEl('text', { x: left, y: bottom + 14, 'font-size': 11, fill: '#5b6673' }, '0 ms'))
  items.push(svgEl('text', { x: W - right, y: bottom + 14, 'font-size': 11, fill: '#5b6673', 'text-anchor': 'end' }, `${end} ms`))
  items.push(svgEl('text', { x: left, y: bottom + 28, 'font-size': 11, fill: '#5b6673' }, '0 requests/s at the axis'))
  svg.replaceChildren(...items)
  svg.dataset.throttles = String(attempts.filter((a) => a.update.throttled).length)
}
