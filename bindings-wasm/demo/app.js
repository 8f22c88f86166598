// The explorer: every decision comes from the wasm engine (the core's JSON API; the gRPC and AWS
// views use the package's typed `grpc` and `aws` over the same module); these modules only
// read the form, call the engine, and draw what it answered. The state lives in the URL hash.
import { $, addItem, field, fill, ready, tables, value, version } from './engine.js'
import { decideCouchbase, scheduleCouchbase } from './couchbase.js'
import { decideMongo, scheduleMongo } from './mongodb.js'
import { decideHttp, scheduleHttp } from './http.js'
import { fillBudgetDefaults, stormPanel } from './storm.js'
import { budgetEvents } from './budget.js'
import { ready as tableReady } from './observe.js'
import { hedgePanel, retryPanel } from './grpc.js'
import { fillLimiterDefaults, ratePanel } from './adaptive.js'

const form = $('form')
// Each view's panels: the function that fills one, the output it hides when that fails, and the
// panel whose own error line shows an error that names no field of the form.
const VIEWS = {
  couchbase: [[decideCouchbase, 'result', 'decide-panel'], [scheduleCouchbase, 'schedule-out', 'schedule-panel']],
  mongodb: [[decideMongo, 'result', 'decide-panel'], [scheduleMongo, 'schedule-out', 'schedule-panel']],
  http: [[decideHttp, 'result', 'decide-panel'], [scheduleHttp, 'schedule-out', 'schedule-panel']],
  storm: [[stormPanel, 'storm-out', 'storm-panel'], [budgetEvents, 'events-out', 'budget-panel']],
  grpc: [[hedgePanel, 'hedge-out', 'hedge-panel'], [retryPanel, 'grpc-retry-out', 'grpc-retry-panel']],
  aws: [[ratePanel, 'rate-out', 'rate-panel']]
}
// The views whose second panel is the schedule (#timeline).
const SCHEDULES = ['couchbase', 'mongodb', 'http']

// ---- URL state ------------------------------------------------------------------------------
function saveState () {
  const params = new URLSearchParams()
  for (const el of form.elements) {
    if (!el.name || (el.type === 'radio' && !el.checked)) continue
    params.set(el.name, el.type === 'checkbox' ? (el.checked ? '1' : '0') : el.value)
  }
  history.replaceState(null, '', '#' + params.toString())
}

// Every field not in the link takes its default, so a link always reproduces the same view.
function loadState () {
  form.reset()
  for (const el of document.querySelectorAll('[form="form"]')) {
    if (el instanceof HTMLSelectElement) el.selectedIndex = Math.max(0, [...el.options].findIndex((o) => o.defaultSelected))
    else if (el.type === 'checkbox') el.checked = el.defaultChecked
    else el.value = el.defaultValue
  }
  field('operation').value = 'upsert'
  field('reason').value = 'SOCKET_CLOSED_WHILE_IN_FLIGHT'
  field('mongo_op').value = 'updateOne'
  field('storm_op').value = 'get'
  field('storm_reason').value = 'KV_TEMPORARY_FAILURE'
  for (const [k, v] of new URLSearchParams(location.hash.slice(1))) {
    const f = field(k)
    if (!f) continue
    if (f instanceof RadioNodeList) f.value = v
    else if (f.type === 'checkbox') f.checked = v === '1'
    else f.value = v
  }
}

// ---- visibility of the fields that apply -----------------------------------------------------
function updateVisibility () {
  const profile = value('profile')
  const service = value('service')
  const failure = value('failure')
  for (const el of document.querySelectorAll('[data-profile]')) el.hidden = !el.dataset.profile.split(' ').includes(profile)
  for (const el of document.querySelectorAll('[data-when-service]')) {
    const okService = el.dataset.whenService.split(' ').includes(service)
    const okFailure = !el.dataset.whenFailure || el.dataset.whenFailure === failure
    el.hidden = !(okService && okFailure)
  }
  for (const el of document.querySelectorAll('[data-when-failure]:not([data-when-service])')) {
    el.hidden = el.dataset.whenFailure !== failure
  }
  // data-when="name:a b": shown while control `name` holds a or b (an error code only for a server reply).
  for (const el of document.querySelectorAll('[data-when]')) {
    const [name, values] = el.dataset.when.split(':')
    el.hidden = !values.split(' ').includes(String(value(name)))
  }
  // The random draw only moves a jittered delay: Couchbase's when jitter is on, MongoDB's always
  // (its backoffs are jittered by spec); the HTTP loop here has no jitter.
  $('random-field').hidden = !(profile === 'mongodb' || (profile === 'couchbase' && value('jitter') !== 'none'))
  $('random-out').textContent = Number(value('random')).toFixed(3)
}

// ---- wiring ------------------------------------------------------------------------------------
// Each panel reports its own error: a bad schedule input leaves the decision standing.
function guarded (fn) {
  try {
    return { value: fn() }
  } catch (e) {
    return { error: e }
  }
}

// The name a control's label shows the user (its text without the control or an error in it).
function labelName (control) {
  const label = control.closest('label')
  if (!label) return control.name
  const copy = label.cloneNode(true)
  for (const el of copy.querySelectorAll('input, select, output, .field-error')) el.remove()
  return copy.textContent.replace(/\s+/g, ' ').trim()
}

// The error's text for the user: the field as its label names it, then what is wrong (the core's
// message starts with its wire field, which the label's name replaces).
function fieldMessage (e, control) {
  const prefix = `${e.field}: `
  const detail = e.field && e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message
  return `${labelName(control)}: ${detail}`
}

// Shows an error beside the control it names (once, however many panels read that control), or
// else on the failing panel's own error line.
function showError (e, panel, shown) {
  const control = e?.control ? field(e.control) : null
  if (control && !(control instanceof RadioNodeList)) {
    if (shown.has(control)) return
    shown.add(control)
    const note = document.createElement('span')
    note.className = 'field-error'
    note.setAttribute('role', 'alert')
    note.textContent = fieldMessage(e, control)
    control.setAttribute('aria-invalid', 'true')
    control.closest('label').append(note)
    return
  }
  const line = $(panel).querySelector('.panel-error')
  line.hidden = false
  line.textContent = `${e?.code ?? 'error'}: ${e?.message ?? e}`
}

function clearErrors () {
  for (const note of document.querySelectorAll('.field-error')) note.remove()
  for (const el of document.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid')
  for (const line of document.querySelectorAll('.panel-error')) { line.hidden = true; line.textContent = '' }
}

function render () {
  updateVisibility()
  saveState()
  clearErrors()
  const view = value('profile')
  // A panel's output shows unless it failed or answered false (nothing to show); it is shown
  // while the panel draws, so that a drawing measures its real width.
  const shown = new Set()
  const results = VIEWS[view].map(([fill, out, panel]) => {
    $(out).hidden = false
    const r = guarded(fill)
    $(out).hidden = Boolean(r.error) || r.value === false
    if (r.error) showError(r.error, panel, shown)
    return r
  })
  if (SCHEDULES.includes(view)) $('timeline').dataset.ending = results[1].error ? 'error' : String(results[1].value)
}

await Promise.all([ready, tableReady])
$('version').textContent = `Engine ${version()}.`
const t = tables()
fill(field('operation'), t.kv_operations.map((o) => o.name))
fill(field('reason'), t.reasons.map((r) => r.name))
fill(field('mongo_op'), t.mongo_operations.map((o) => o.name))
fill(field('storm_op'), t.kv_operations.map((o) => o.name))
fill(field('storm_reason'), t.reasons.map((r) => r.name))
fillBudgetDefaults()
fillLimiterDefaults()
// Each list's buttons: one adding each item its data-items names, then one clearing the list.
function button (text, data) {
  const b = document.createElement('button')
  b.type = 'button'
  b.textContent = text
  Object.assign(b.dataset, data)
  return b
}
for (const group of document.querySelectorAll('.add-buttons[data-to]')) {
  const to = group.dataset.to
  group.replaceChildren(...group.dataset.items.split(' ').map((item) => button(`+ ${item}`, { add: item, to })), button('clear', { clear: to }))
}
loadState()
// Controls outside the <form> element (form="form") do not bubble to it: listen on the document.
for (const type of ['input', 'change']) {
  document.addEventListener(type, (e) => { if (e.target.form === form) render() })
}
document.addEventListener('click', (e) => {
  const b = e.target.closest('button[data-add], button[data-clear]')
  if (!b) return
  if (b.dataset.add) addItem(b.dataset.to, b.dataset.add)
  else field(b.dataset.clear).value = ''
  render()
})
window.addEventListener('hashchange', () => { loadState(); render() })
// The drawings are as wide as their boxes: redraw when the page changes width.
const main = document.querySelector('main')
let width = main.clientWidth
new ResizeObserver(() => {
  if (main.clientWidth !== width) { width = main.clientWidth; render() }
}).observe(main)
render()
document.body.dataset.ready = '1'
