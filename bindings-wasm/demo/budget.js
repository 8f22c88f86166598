// A budget event by event: the budget chosen in the storm panel, fed the events the user lists
// (one every `b_spacing` ms) through the core's `budget_run`; the balance after each event and the
// verdict on a retry are its answer, drawn as a step line and a table.
import { $, api, inputError, items, num, value } from './engine.js'
import { BUDGET_CONTROLS, budgetDocument } from './storm.js'
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

// What each kind's balance is shown in, and the factor from budget_run's figure to it: the core
// counts the gRPC bucket in milli-tokens (gRFC A6's thousandths); the page shows tokens, the unit
// of the bucket's fields, so that its inputs, table and chart read alike.
const UNITS = {
  token_bucket: { unit: 'tokens', per: 1000 },
  retry_quota: { unit: 'tokens', per: 1 },
  percentage: { unit: 'retries left in the window', per: 1 }
}

// A balance in the shown unit, with thousands separators and at most three decimals.
const shown = (balance, kind) => (balance / UNITS[kind].per).toLocaleString('en-US', { maximumFractionDigits: 3 })

/** The events panel; false (nothing to show) when no budget is chosen. */
export function budgetEvents () {
  const kind = value('storm_budget')
  $('events-none').hidden = kind !== 'none'
  if (kind === 'none') return false
  const spacing = num('b_spacing')
  const events = items('b_events').map((name, i) => {
    if (!Object.hasOwn(EVENTS, name)) throw inputError('b_events', `"${name}" is not one of ${Object.keys(EVENTS).join(', ')}`)
    return { at_ms: i * spacing, ...EVENTS[name] }
  })
  if (events.length === 0) throw inputError('b_events', 'list at least one event')
  const run = api('budget_run', { budget: budgetDocument(kind), events }, BUDGET_CONTROLS)
  const names = items('b_events')
  const { unit } = UNITS[kind]
  fillTable(['#', 'at ms', 'event', 'verdict on a retry', `balance (${unit})`], run.verdicts.map((v, i) => [
    i + 1, events[i].at_ms, names[i], v.permitted ? `permitted (${v.rule})` : `refused (${v.rule})`, shown(v.balance, kind)
  ]), { id: 'budget-steps', numeric: [true, true, false, false, true] })
  const refused = run.permitted.filter((p) => !p).length
  $('events-ending').textContent = `${kind}: balance ${shown(run.balances[run.balances.length - 1], kind)} ${unit} after ${events.length} events; ` +
    `the budget refused a retry at ${refused} of them.`
  $('balance-unit').textContent = `balance (${unit})`
  drawBalances(run.balances, run.permitted, kind)
  return true
}

const HEIGHT = 160
// The balance after each event as a step line from 0 to the largest balance, one dot per event
// (red where a retry was refused).
function drawBalances (balances, permitted, kind) {
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
    svgEl('line', { class: 'axis', x1: left, x2: W - right, y1: bottom, y2: bottom, stroke: '#9aa5b1' }),
    svgEl('path', { class: 'balance', d: path, fill: 'none', stroke: 'var(--att)', 'stroke-width': 2 }),
    ...balances.map((b, i) => svgEl('circle', { class: 'event', cx: x(i), cy: y(b), r: 3.5, fill: permitted[i] ? 'var(--ok)' : 'var(--no)' })),
    svgEl('text', { x: left, y: 16, 'font-size': 11, fill: '#5b6673' }, `${shown(high, kind)} ${UNITS[kind].unit} (highest balance)`),
    svgEl('text', { x: left, y: 140, 'font-size': 11, fill: '#5b6673' }, 'event 1'),
    svgEl('text', { x: left, y: 154, 'font-size': 11, fill: '#5b6673' }, `0 ${UNITS[kind].unit} at the axis`)
  ]
  if (balances.length > 1) items.push(svgEl('text', { x: W - right, y: 140, 'font-size': 11, fill: '#5b6673', 'text-anchor': 'end' }, `event ${balances.length}`))
  svg.replaceChildren(...items)
}
