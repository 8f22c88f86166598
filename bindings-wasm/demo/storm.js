// The retry storm: many clients send one Couchbase KV request under a failure rate, each failure
// through `decide`, each retry through one shared budget, each attempt through one shared breaker.
// Every figure is the core's `simulate_storm` answer: run once without a budget, then once with
// each kind (the CLI's `storm --compare`). The page only reads the form and draws the answers.
import { $, api, count, decimal, field, num, value } from './engine.js'
import { fillTable, svgEl } from './timeline.js'

/** Each budget kind's document fields, in the compare table's order, with how a field is read. */
export const KINDS = {
  token_bucket: { max_tokens: decimal, token_ratio: decimal },
  retry_quota: { capacity: num, retry_cost: num, timeout_cost: num, no_retry_increment: num },
  percentage: { percent: decimal, ttl_ms: num, min_retries_per_sec: num }
}

/**
 * Pre-fills every budget field with its source's default, as the core's normalized document says
 * (gRPC's bucket has no defaults, as gRPC's service config has none: `lenient` fills gRFC A6's example).
 */
export function fillBudgetDefaults () {
  for (const [kind, fields] of Object.entries(KINDS)) {
    const { budget } = api('budget_run', { budget: kind === 'token_bucket' ? { kind, lenient: true } : { kind }, events: [] })
    for (const name of Object.keys(fields)) field(`b_${name}`).defaultValue = String(budget[name])
  }
}

/** The budget document of `kind` ('none': null) from the fields of that kind. */
export function budgetDocument (kind) {
  if (kind === 'none') return null
  const doc = { kind }
  for (const [name, read] of Object.entries(KINDS[kind])) doc[name] = read(`b_${name}`)
  return doc
}

/** The budget document's wire fields, as the core's errors name them, and the controls holding them. */
export const BUDGET_CONTROLS = Object.fromEntries(Object.values(KINDS).flatMap((fields) => Object.keys(fields).map((name) => [`budget.${name}`, `b_${name}`])))

// The core's wire fields, as its errors name them, and the form controls that hold them.
const CONTROLS = {
  requests_per_second: 'storm_rps', duration_ms: 'storm_duration', failure_rate: 'storm_failure_rate', latency_ms: 'storm_latency',
  'request.timeout_ms': 'storm_timeout',
  ...BUDGET_CONTROLS
}

function scenario () {
  const storm = {
    request: { service: 'kv', operation: value('storm_op'), attempts: 0, elapsed_ms: 0, timeout_ms: num('storm_timeout') },
    reason: value('storm_reason'),
    requests_per_second: num('storm_rps'),
    duration_ms: num('storm_duration'),
    failure_rate: decimal('storm_failure_rate'),
    latency_ms: num('storm_latency'),
    policy: { strategy: value('storm_strategy') }
  }
  if (value('storm_breaker')) storm.breaker = {}
  return storm
}

const amplification = (r) => `${r.amplification.toFixed(2)}x`
// The requests, the same in every run, go in the caption so that the table fits a phone; a soft
// hyphen lets 'amplification' break there too.
const HEAD = ['budget', 'attempts sent', 'ampli\u00ADfication', 'budget refusals', 'breaker rejections']

/** The storm panel: the compare table, the chosen budget's sentence and the amplification chart. */
export function stormPanel () {
  const storm = scenario()
  const chosen = value('storm_budget')
  const runs = ['none', ...Object.keys(KINDS)].map((kind) => {
    const budget = budgetDocument(kind)
    return { kind, report: api('simulate_storm', budget ? { ...storm, budget } : storm, CONTROLS) }
  })
  fillTable(HEAD, runs.map(({ report: r }) => [r.budget_kind ?? 'none', count(r.attempts_sent),
    amplification(r), count(r.budget_refusals), count(r.breaker_rejections)]), { id: 'storm-table', numeric: HEAD.map((_, i) => i > 0) })
  $('storm-table').caption.textContent = `Each run: ${[...new Set(runs.map(({ report }) => count(report.requests)))].join(' / ')} requests`
  runs.forEach(({ kind }, i) => { $('storm-table').tBodies[0].rows[i].classList.toggle('chosen', kind === chosen) })
  const r = runs.find((run) => run.kind === chosen).report
  $('storm-ending').textContent = `${chosen === 'none' ? 'Without a budget' : `With the ${chosen} budget`}: ` +
    `${count(r.requests)} requests sent ${count(r.attempts_sent)} attempts to the server (${amplification(r)}); ` +
    `${count(r.succeeded)} succeeded, ${count(r.failed)} failed (${count(r.budget_refusals)} refused a retry by the budget), ` +
    `${count(r.timed_out)} timed out` +
    (storm.breaker ? `; the breaker kept ${count(r.breaker_rejections)} attempts from the server.` : '.')
  drawAmplification(runs.map(({ kind, report }) => ({ label: report.budget_kind ?? 'none', value: report.amplification, chosen: kind === chosen })))
  return chosen
}

const ROW = 26
// Horizontal bars, one per budget kind, scaled to the largest amplification (at least 1x), with a
// dashed line at 1x (no retry reached the server) and each figure at the end of its bar.
function drawAmplification (bars) {
  const svg = $('storm-chart')
  const W = Math.max(svg.clientWidth, 280)
  const H = 22 + ROW * bars.length + 18
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`)
  svg.style.height = `${H}px`
  const left = 104; const right = 56
  const top = Math.max(1, ...bars.map((b) => b.value))
  const x = (a) => left + (a / top) * (W - left - right)
  const items = [svgEl('text', { x: 8, y: 14, 'font-size': 12, fill: '#5b6673' }, 'amplification (attempts sent / requests)')]
  bars.forEach((b, i) => {
    const y = 22 + i * ROW
    items.push(svgEl('text', { x: 8, y: y + 14, 'font-size': 12, fill: b.chosen ? 'var(--att)' : 'var(--fg)' }, b.label))
    items.push(svgEl('rect', { class: 'amp', x: left, y: y + 2, width: Math.max(x(b.value) - left, 1), height: 16, fill: b.chosen ? 'var(--att)' : 'var(--wait)' }))
    items.push(svgEl('text', { class: 'amp-label', x: x(b.value) + 4, y: y + 14, 'font-size': 12, fill: 'var(--fg)' }, `${b.value.toFixed(2)}x`))
  })
  const one = x(1)
  const bottom = 22 + ROW * bars.length
  items.push(svgEl('line', { class: 'one', x1: one, x2: one, y1: 20, y2: bottom, stroke: 'var(--no)', 'stroke-dasharray': '4 3' }))
  items.push(svgEl('text', { x: one, y: bottom + 13, 'font-size': 11, fill: 'var(--no)', 'text-anchor': 'middle' }, '1x'))
  svg.replaceChildren(...items)
}
