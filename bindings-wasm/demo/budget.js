// A budget event by event: the budget chosen in the storm panel, fed the events the user lists
// (one every `b_spacing` ms) through the core's `budget_run`; the balance after each event and the
// verdict on a retry are its answer, drawn as a step line and a table.
import { $, api, count, inputError, items, num, value } from './engine.js'
import { budgetDocument } from './storm.js'
import { fillTable, svgEl } from './timeline.js'

// The names the list accepts, as budget_run's events (success_after_retry: a retry that succeeded;
// final: a failure that is not retried, which gRFC A6 counts as a success).
const EVENTS = {
  request: { kind: 'request' },
  failure: { kind: 'failure' },
  timeout: { kind: 'timeout' },
  final: { kind: 'final' },
  retry: { kind: 'retry' },
  retry_timeout: { kind: 'retry', cause: 'timeout' },
  success: { kind: 'success' },
  success_after_retry: { kind: 'success', after_retry: 'error' }
}

// What each kind's balance counts, as budget_run's documentation says.
const UNITS = { token_bucket: 'milli-tokens', retry_quota: 'tokens', percentage: 'retries left in the window' }

/** The events panel; false (nothing to show) when no budget is chosen. */
export function budgetEvents () {
  const kind = value('storm_budget')
  $('events-none').hidden = kind !== 'none'
  if (kind === 'none') return false
  const spacing = num('b_spacing')
  const events = items('b_events').map((name, i) => {
    if (!Object.hasOwn(EVENTS, name)) throw inputError(`b_events: "${name}" is not one of ${Object.keys(EVENTS).join(', ')}`)
    return { at_ms: i * spacing, ...EVENTS[name] }
  })
  if (events.length === 0) throw inputError('b_events: list at least one event')
  const run = api('budget_run', { budget: budgetDocument(kind), events })
  const names = items('b_events')
  fillTable(['#', 'at ms', 'event', 'verdict on a retry', `balance (${UNITS[kind]})`], run.verdicts.map((v, i) => [
    i + 1, events[i].at_ms, names[i], v.permitted ? `permitted (${v.rule})` : `refused (${v.rule})`, count(v.balance)
  ]), { id: 'budget-steps', numeric: [true, true, false, false, true] })
  const refused = run.permitted.filter((p) => !p).length
  $('events-ending').textContent = `${kind}: balance ${count(run.balances[run.balances.length - 1])} ${UNITS[kind]} after ${events.length} events; ` +
    `the budget refused a retry at ${refused} of them.`
  drawBalances(run.balances, run.permitted)
  return true
}

const HEIGHT = 160
// The balance after each event as a step line from 0 to the largest balance, one dot per event
// (red where a retry was refused).
function drawBalances (balances, permitted) {
  const svg = $('balance-chart')
  const W = Math.max(svg.clientWidth, 280)
  svg.setAttribute('viewBox', `0 0 ${W} ${HEIGHT}`)
  const left = 10; const right = 14; const top = 26; const bottom = 124
  const high = Math.max(1, ...balances)
  const x = (i) => left + (balances.length === 1 ? 0 : (i / (balances.length - 1)) * (W - left - right))
  const y = (b) => bottom - (b / high) * (bottom - top)
  // Each balance holds until the next event: across to it, then up or down to its balance.
  const path = `M${x(0)} ${y(balances[0])} ` + balances.slice(1).map((b, i) => `H${x(i + 1)} V${y(b)}`).join(' ')
  const items = [
    svgEl('line', { x1: left, x2: W - right, y1: bottom, y2: bottom, stroke: '#9aa5b1' }),
    svgEl('path', { d: path, fill: 'none', stroke: 'var(--att)', 'stroke-width': 2 }),
    ...balances.map((b, i) => svgEl('circle', { class: 'event', cx: x(i), cy: y(b), r: 3.5, fill: permitted[i] ? 'var(--ok)' : 'var(--no)' })),
    svgEl('text', { x: left, y: 16, 'font-size': 11, fill: '#5b6673' }, `${count(high)} (highest balance)`),
    svgEl('text', { x: left, y: 140, 'font-size': 11, fill: '#5b6673' }, 'event 1'),
    svgEl('text', { x: left, y: 154, 'font-size': 11, fill: '#5b6673' }, '0 at the axis; red: a retry refused')
  ]
  if (balances.length > 1) items.push(svgEl('text', { x: W - right, y: 140, 'font-size': 11, fill: '#5b6673', 'text-anchor': 'end' }, `event ${balances.length}`))
  svg.replaceChildren(...items)
}
