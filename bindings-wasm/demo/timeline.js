// The schedule's drawing and table, the same for every domain: each domain's module turns the
// engine's answers into bars (attempts and waits), an optional limit line and marker, and rows.
import { $ } from './engine.js'
import { attributeLines, statsText } from './observe.js'

const HEIGHT = 160
// An attempt label (11 px digits, ~7 px each) needs this much room before the next one.
const labelRoom = (text) => 7 * text.length + 5

/** An SVG element `name` with `attrs` and an optional text. */
export function svgEl (name, attrs, text) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', name)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v)
  if (text !== undefined) el.textContent = text
  return el
}

// Labels at x positions, left to right: one is dropped when it would touch the one before; the
// last one always shows (it replaces its neighbour instead, and lies further from the one before).
function spacedLabels (labels) {
  const kept = []
  for (const l of labels) {
    if (kept.length === 0 || l.x - kept[kept.length - 1].x >= labelRoom(kept[kept.length - 1].text)) kept.push(l)
    else if (l === labels[labels.length - 1]) kept[kept.length - 1] = l
  }
  return kept
}

// A text that stays inside the drawing: anchored at its end when it would run off the right.
function edgeText (x, y, width, text, attrs) {
  const anchor = x > width - 8 * text.length ? 'end' : 'start'
  return svgEl('text', { x: anchor === 'end' ? x - 4 : x + 4, y, 'text-anchor': anchor, 'font-size': 12, ...attrs }, text)
}

/**
 * Draws `bars` ({ start, end, kind: 'attempt' | 'wait', ok, label }) between `start` and the
 * furthest bar, limit or marker; `limit` ({ at, label }) is the timeout or deadline line and
 * `marker` ({ at, label }) a point past the end (the server's Retry-After), labelled under the
 * axis so that the limit line never crosses its text. The drawing is as wide
 * as the element, so text keeps its size on a phone. `svg` and `note` are the ids of the drawing
 * and of the line that counts the labels left out (the schedule's by default).
 */
export function drawTimeline ({ bars, start, limit, marker }, { svg: svgId = 'timeline', note = 'timeline-note' } = {}) {
  const svg = $(svgId)
  const W = Math.max(svg.clientWidth, 280)
  svg.setAttribute('viewBox', `0 0 ${W} ${HEIGHT}`)
  const left = 10; const right = 10
  const end = Math.max(...bars.map((b) => b.end), limit?.at ?? 0, marker?.at ?? 0, start + 1)
  const x = (ms) => left + ((ms - start) / (end - start)) * (W - left - right)
  const items = [svgEl('line', { class: 'axis', x1: left, x2: W - right, y1: 120, y2: 120, stroke: '#9aa5b1' })]
  const labels = []
  for (const b of bars) {
    // Every bar says what it is when hovered or tapped (its <title>), labelled or not.
    if (b.kind === 'wait') {
      const wait = svgEl('rect', { class: 'wait', x: x(b.start), y: 80, width: Math.max(x(b.end) - x(b.start), 1), height: 20, fill: 'var(--wait)' })
      wait.append(svgEl('title', {}, `wait ${b.end - b.start} ms (${b.start} to ${b.end} ms)${b.note ? `: ${b.note}` : ''}`))
      items.push(wait)
      continue
    }
    const attempt = svgEl('rect', { class: 'attempt', x: x(b.start), y: 70, width: Math.max(x(b.end) - x(b.start), 3), height: 40, fill: b.ok ? 'var(--ok)' : 'var(--fail)' })
    attempt.append(svgEl('title', {}, `${b.label === undefined ? 'attempt' : `attempt ${b.label}`}: ${b.start} to ${b.end} ms, ${b.ok ? 'succeeded' : 'failed'}${b.note ? `; ${b.note}` : ''}`))
    items.push(attempt)
    if (b.label !== undefined) labels.push({ x: x(b.start), text: String(b.label) })
  }
  const kept = spacedLabels(labels)
  for (const l of kept) items.push(svgEl('text', { class: 'label', x: l.x, y: 62, 'font-size': 11, fill: '#5b6673' }, l.text))
  // Labels too close to fit are left out, and the page says how many.
  const hidden = labels.length - kept.length
  $(note).hidden = hidden === 0
  $(note).textContent = hidden === 0 ? ''
    : `${hidden} of ${labels.length} bar labels left out where the bars crowd; hover or tap a bar to see what it is.`
  if (limit) {
    items.push(svgEl('line', { class: 'limit', x1: x(limit.at), x2: x(limit.at), y1: 20, y2: 120, stroke: 'var(--no)', 'stroke-dasharray': '4 3' }))
    items.push(edgeText(x(limit.at), 32, W, limit.label, { class: 'limit-label', fill: 'var(--no)' }))
  }
  if (marker) {
    items.push(svgEl('line', { class: 'marker', x1: x(marker.at), x2: x(marker.at), y1: 40, y2: 120, stroke: 'var(--att)', 'stroke-dasharray': '2 2' }))
    items.push(edgeText(x(marker.at), 137, W, marker.label, { class: 'marker-label', fill: 'var(--att)' }))
  }
  items.push(svgEl('text', { x: left, y: 154, 'font-size': 11, fill: '#5b6673' }, `${start} ms`))
  items.push(svgEl('text', { x: W - right, y: 154, 'font-size': 11, fill: '#5b6673', 'text-anchor': 'end' }, `${end} ms`))
  svg.replaceChildren(...items)
  svg.dataset.attempts = String(bars.filter((b) => b.kind !== 'wait').length)
}

/**
 * Fills a table (the schedule's unless `id` names another): `head` names the columns, `numeric`
 * says which hold numbers (by default those whose name is '#' or ends with ' ms' or is 'value').
 */
export function fillTable (head, rows, { id = 'steps', numeric = head.map((h) => h === '#' || h === 'value' || h.endsWith(' ms')) } = {}) {
  const table = $(id)
  const tr = document.createElement('tr')
  head.forEach((h, i) => {
    const th = document.createElement('th')
    th.textContent = h
    if (numeric[i]) th.className = 'num'
    tr.append(th)
  })
  table.tHead.replaceChildren(tr)
  table.tBodies[0].replaceChildren(...rows.map((row) => {
    const r = document.createElement('tr')
    row.forEach((text, i) => {
      const td = document.createElement('td')
      td.textContent = String(text ?? '')
      if (numeric[i]) td.className = 'num'
      r.append(td)
    })
    return r
  }))
}

/** Sets the sentence that says how the schedule ended. */
export function setEnding (text) {
  $('ending').textContent = text
}

/**
 * Shows a run replayed through the core's `run` (run.js's `runSchedule`): the timeline (each attempt's
 * bar titled with what it records), the schedule's table, the ending, and what OpenTelemetry would
 * record per attempt (observe.js: the table's signals, and the run's statistics).
 */
export function showRun (schedule, stats, { start = 0, limit, marker, ending }) {
  const recorded = new Map()
  for (const [attempt, s] of schedule.signals) recorded.set(attempt, [...(recorded.get(attempt) ?? []), s.name])
  const bars = schedule.bars.map((b) => b.kind === 'attempt' && recorded.has(b.label) ? { ...b, note: `records ${recorded.get(b.label).join(', ')}` } : b)
  drawTimeline({ bars, start, limit, marker })
  setEnding(ending)
  fillTable(['#', 'sent ms', 'result', 'decision', 'wait ms'], schedule.rows)
  // The signal's name and instrument, then each attribute on a line of its own (the names are long).
  // The value goes before the long names, so that a phone shows it without scrolling the table.
  fillTable(['#', 'value', 'signal and attributes'], schedule.signals.map(([attempt, s]) => [
    attempt, s.value ?? '', [`${s.name} (${s.kind})`, ...attributeLines(s)].join('\n')
  ]), { id: 'signals' })
  $('run-stats').textContent = statsText(stats)
}
