// The engine and the form, shared by every panel: calls go to the wasm module's JSON API (the
// core's rules); fields are read from the one <form id="form"> (controls outside it carry form="form").
import init, * as rp from '../pkg/web/retrypolicy_wasm.js'

/** Loads the wasm module; resolves when `api` can be called. */
export const ready = init()

/** The engine's version string. */
export const version = () => rp.version()

/** The engine's tables (reasons, KV and MongoDB operations, error codes). */
export const tables = () => JSON.parse(rp.tables())

/**
 * Calls the core's JSON API function `fn` with `input`; throws the core's typed error, with
 * `control` set to the form control that `controls` maps its wire field to (when it names one).
 */
export function api (fn, input, controls = {}) {
  try {
    return JSON.parse(rp.call(fn, JSON.stringify(input)))
  } catch (e) {
    if (e && typeof e === 'object' && e.field && Object.hasOwn(controls, e.field)) e.control = controls[e.field]
    throw e
  }
}

/**
 * What `fn` returns (a call of the package's typed API); a typed error from the core gets
 * `control`, the form control `controlOf(its field)` names, unless it already has one.
 */
export function withControl (fn, controlOf) {
  try {
    return fn()
  } catch (e) {
    if (e && typeof e === 'object' && typeof e.field === 'string' && e.control === undefined) e.control = controlOf(e.field)
    throw e
  }
}

/** The element with id `id`. */
export const $ = (id) => document.getElementById(id)

/** The form control (or radio group) named `name`. */
export const field = (name) => $('form').elements.namedItem(name)

/** A control's value: the checked radio's value, a checkbox's state, or the text. */
export function value (name) {
  const f = field(name)
  if (f instanceof RadioNodeList) return f.value
  return f.type === 'checkbox' ? f.checked : f.value
}

/** A page input error about form control `control`, shown beside it like the engine's typed errors. */
export function inputError (control, message) {
  return Object.assign(new Error(message), { code: 'invalid_input', control })
}

/** A field holding a whole number of ms or attempts. */
export function num (name) {
  const text = String(field(name).value).trim()
  if (!/^\d+$/.test(text)) throw inputError(name, `expected a whole number, got "${text}"`)
  return Number(text)
}

/** A field holding a decimal number (a share, a ratio, a percentage). */
export function decimal (name) {
  const text = String(field(name).value).trim()
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(text)) throw inputError(name, `expected a number, got "${text}"`)
  return Number(text)
}

/**
 * A field's text as a JSON value for a document the core checks: a number when it reads as one,
 * else the text as it is (the core's typed error then says what the field takes).
 */
export function loose (name) {
  const text = String(value(name)).trim()
  return text !== '' && Number.isFinite(Number(text)) ? Number(text) : text
}

/** A field holding a whole number, or null when left empty. */
export function optionalNum (name) {
  return String(field(name).value).trim() === '' ? null : num(name)
}

/** Replaces a select's options with `values`. */
export function fill (select, values) {
  select.replaceChildren(...values.map((v) => new Option(v, v)))
}

/** The comma-separated items of a text field, trimmed, empty ones dropped. */
export function items (name) {
  return String(value(name)).split(',').map((s) => s.trim()).filter(Boolean)
}

/** Appends `item` to the comma-separated list in text field `name`. */
export function addItem (name, item) {
  field(name).value = [...items(name), item].join(', ')
}

/** Formats a count with thousands separators (13,000). */
export const count = (n) => n.toLocaleString('en-US')

/** `n` reproducible draws in [0, 1) from the form's one (golden-ratio steps). */
export function draws (n) {
  const r = Number(value('random'))
  return Array.from({ length: n }, (_, i) => (r + i * 0.6180339887) % 1)
}

/**
 * Shows one decision in the result panel: badge, delay, sentence, JSON, and the rule, spec section
 * and classification rows that the decision has (a row without a value is hidden, not left empty).
 */
export function show (r) {
  $('action').textContent = r.label
  $('action').className = `badge ${r.action}`
  $('delay').textContent = r.delay
  $('sentence').textContent = r.sentence
  for (const key of ['rule', 'section', 'classified']) {
    const dd = $(key)
    dd.textContent = r[key] || ''
    dd.hidden = !r[key]
    dd.previousElementSibling.hidden = !r[key]
  }
  $('json').textContent = JSON.stringify(r.json, null, 2)
}

/**
 * The budget and breaker a schedule's run goes through (the schedule panel's fields), as the core's
 * `run` input takes them: `budget` (its source's defaults; gRPC's bucket has none, so gRFC A6's
 * example: `lenient`) with an optional `budget_state` (the balance at the start), and `breaker`.
 */
export function runGuards () {
  const guards = {}
  const kind = value('run_budget')
  if (kind !== 'none') {
    guards.budget = kind === 'token_bucket' ? { kind, lenient: true } : { kind }
    const tokens = String(value('run_tokens')).trim()
    if (tokens !== '' && kind !== 'percentage') {
      // The core counts gRPC's bucket in thousandths of a token (gRFC A6), the AWS quota in tokens.
      guards.budget_state = { version: 1, kind, balance: kind === 'token_bucket' ? Math.round(decimal('run_tokens') * 1000) : num('run_tokens') }
    }
  }
  if (value('run_breaker')) guards.breaker = { volume_threshold: num('run_volume'), sleep_window_ms: num('run_sleep') }
  return guards
}

/** The wire fields of `runGuards`'s documents, as the core's errors name them, and their controls. */
export const GUARD_CONTROLS = {
  'budget_state.balance': 'run_tokens', budget_state: 'run_tokens', 'breaker.volume_threshold': 'run_volume', 'breaker.sleep_window_ms': 'run_sleep'
}
