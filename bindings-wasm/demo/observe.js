// What the OpenTelemetry support of the Python and Node bindings would record for a run: the one
// table of names, spec-fixtures/observability.json (served beside this page as observability.json,
// a link to that file), applied to the steps of the core's `run` answer. Each step says what
// happened (the core decided it: a send, a retry's wait, the breaker's wait, the end, its signal,
// the budget's and the breaker's verdicts, the breaker's state changes); this module only names it, with the
// table's metric, event and attribute names, in the table's order per step.

let table = null

/** Loads the table; resolves when `stepSignals` can be called. */
export const ready = fetch(new URL('observability.json', import.meta.url))
  .then((r) => { if (!r.ok) throw new Error(`observability.json: HTTP ${r.status}`); return r.json() })
  .then((t) => { table = t })

// The table's gauge of the breaker's state: "0 closed, 1 open, 2 half_open (resilience4j's numbering)".
const STATE_NUMBER = { closed: 0, open: 1, half_open: 2 }

// The metric or span event of the table named scope + '.' + `short`; throws if the table has none.
function named (list, short) {
  const entry = table[list].find((m) => m.name === `${table.scope}.${short}`)
  if (!entry) throw new Error(`observability.json has no ${list} entry ${table.scope}.${short}`)
  return entry
}

// `values` (short attribute names: reason, rule, ...; http.request.resend_count as it is), kept to
// the attributes the table lists for `entry`, without the absent ones, under their full names.
function attributes (entry, values) {
  const out = {}
  for (const name of entry.attributes) {
    const short = name.startsWith(`${table.scope}.`) ? name.slice(table.scope.length + 1) : name
    if (values[short] !== undefined && values[short] !== null) out[name] = values[short]
  }
  return out
}

const metric = (short, value, values = {}) => {
  const m = named('metrics', short)
  return { kind: m.instrument, name: m.name, value, attributes: attributes(m, values) }
}
const event = (short, values) => {
  const e = named('span_events', short)
  return { kind: 'span event', name: e.name, attributes: attributes(e, values) }
}

/**
 * The signals one step of a `run` answer records, in the table's order: each of the breaker's state changes
 * (state_changes, then the state gauge), budget.refusals, breaker.rejections, attempts, retries and
 * the retry event, give_ups and the give-up event. `http`: the run's rules are HTTP's (a retry
 * event then carries http.request.resend_count).
 */
export function stepSignals (step, { http = false } = {}) {
  const out = []
  // Every change the step's call made, in order (one call may make two: a canary found timed out,
  // then this attempt sent as the next one).
  // The explorer's breaker has no name: the table's default one.
  const name = table.breaker_name_default
  for (const change of step.breaker_changes ?? []) {
    out.push(metric('breaker.state_changes', 1, { 'breaker.name': name, 'breaker.from': change.from, 'breaker.to': change.to, rule: change.rule }))
    out.push(metric('breaker.state', STATE_NUMBER[change.to], { 'breaker.name': name }))
  }
  if (step.budget && !step.budget.permitted) out.push(metric('budget.refusals', 1, { 'budget.kind': step.budget.kind, rule: step.budget.rule }))
  if (step.breaker && !step.breaker.permitted) out.push(metric('breaker.rejections', 1, { 'breaker.name': name, rule: step.breaker.rule }))
  if (step.action === 'send') out.push(metric('attempts', 1))
  // What the step is (a retry, a give-up, or neither) is the core's: its `signal`.
  if (step.signal === 'retry') {
    // A wait step's attempt is the one that follows: the failed one is the one before it, and the
    // request will have been resent that many times once the next goes.
    const failed = step.attempt - 1
    out.push(metric('retries', 1, { reason: step.reason, rule: step.rule }))
    out.push(event('retry', { attempt: failed, reason: step.reason, rule: step.rule, delay_ms: step.delay_ms, 'http.request.resend_count': http ? failed : null }))
  }
  if (step.signal === 'give_up') {
    out.push(metric('give_ups', 1, { end: step.end, reason: step.reason, rule: step.rule }))
    out.push(event('give_up', { attempt: step.attempt, end: step.end, reason: step.reason, rule: step.rule }))
  }
  return out
}

/** A signal's attributes as text, one `name=value` each. */
export const attributeLines = (s) => Object.entries(s.attributes).map(([k, v]) => `${k}=${v}`)

/** The run's statistics (the `stats` of its answer) as a sentence. */
export function statsText (stats) {
  const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`
  return `Its statistics (stats): ${plural(stats.attempts, 'attempt')}, ${plural(stats.retries, 'retry', 'retries')}, ` +
    `${stats.waited_ms} ms waited, ${stats.elapsed_ms} ms elapsed, ${plural(stats.budget_refusals, 'budget refusal')}, ` +
    `${plural(stats.breaker_rejections, 'breaker rejection')}; end ${stats.end ?? 'none yet'}, last rule ${stats.last_rule ?? 'none'}.`
}
