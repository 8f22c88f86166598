// The explorer: every decision comes from the wasm engine (the core's JSON API); this file only
// reads the form, calls the engine, and draws what it answered. The state lives in the URL hash.
import init, * as rp from '../pkg/web/retrypolicy_wasm.js'

const PATTERNS = {
  temporary: { outcomes: ['KV_TEMPORARY_FAILURE'], repeat: true },
  'closed-once': { outcomes: ['SOCKET_CLOSED_WHILE_IN_FLIGHT', null], repeat: false },
  'nmvb-storm': { outcomes: ['KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET',
    'KV_NOT_MY_VBUCKET', 'KV_NOT_MY_VBUCKET', null], repeat: false },
  'locked-3': { outcomes: ['KV_LOCKED', 'KV_LOCKED', 'KV_LOCKED', null], repeat: false }
}
const $ = (id) => document.getElementById(id)
const form = $('form')
const field = (name) => form.elements.namedItem(name)

function api (fn, input) {
  return JSON.parse(rp.call(fn, JSON.stringify(input)))
}

function fill (select, values) {
  select.replaceChildren(...values.map((v) => new Option(v, v)))
}

function num (name) {
  const text = String(field(name).value).trim()
  if (!/^\d+$/.test(text)) throw Object.assign(new Error(`${name}: expected a whole number, got "${text}"`), { code: 'invalid_input' })
  return Number(text)
}

function value (name) {
  const f = field(name)
  if (f instanceof RadioNodeList) return f.value
  return f.type === 'checkbox' ? f.checked : f.value
}

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
    else el.value = el.defaultValue
  }
  field('operation').value = 'upsert'
  field('reason').value = 'SOCKET_CLOSED_WHILE_IN_FLIGHT'
  field('mongo_op').value = 'updateOne'
  const params = new URLSearchParams(location.hash.slice(1))
  for (const [k, v] of params) {
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
  for (const el of document.querySelectorAll('[data-profile]')) el.hidden = el.dataset.profile !== profile
  for (const el of document.querySelectorAll('[data-when-service]')) {
    const okService = el.dataset.whenService.split(' ').includes(service)
    const okFailure = !el.dataset.whenFailure || el.dataset.whenFailure === failure
    el.hidden = !(okService && okFailure)
  }
  for (const el of document.querySelectorAll('[data-when-failure]:not([data-when-service])')) {
    el.hidden = el.dataset.whenFailure !== failure
  }
  $('schedule-panel').hidden = profile !== 'couchbase'
  $('random-out').textContent = Number(value('random')).toFixed(3)
}

// ---- Couchbase ---------------------------------------------------------------------------------
function couchbaseRequest () {
  const service = value('service')
  const request = { service, attempts: num('attempts'), elapsed_ms: num('elapsed'), timeout_ms: num('timeout'), random: Number(value('random')) }
  if (service === 'kv') request.operation = value('operation')
  if (service === 'query' || service === 'analytics') request.readonly = value('readonly')
  if (service === 'cluster_manager' || service === 'management') request.method = value('method')
  return request
}

function couchbasePolicy () {
  return { strategy: value('strategy'), jitter: value('jitter') }
}

// A decimal code goes as a number; anything else (0x-hex for KV) as text, which the engine parses.
function statusValue (text) {
  const t = text.trim()
  return /^\d+$/.test(t) ? Number(t) : t
}

function classifyResponse () {
  const service = value('service')
  const status = statusValue(value('status'))
  const body = value('body')
  switch (service) {
    case 'kv': return api('classify_kv', { operation: value('operation'), status })
    case 'query': return api('classify_query', { code: status, message: body })
    case 'analytics': return api('classify_analytics', { code: status })
    case 'search': return api('classify_search', { http_status: status })
    case 'views': return api('classify_views', { http_status: status, body })
    default: throw Object.assign(new Error(`the engine has no response-code classifier for ${service}: give a retry reason`), { code: 'invalid_input' })
  }
}

function showCouchbase () {
  let reason = value('reason')
  let classified = ''
  if (value('failure') === 'status') {
    const c = classifyResponse()
    classified = `${c.reason ?? 'no retry reason'} (rule ${c.rule}${c.surface_as ? `; surface as ${c.surface_as}` : ''})`
    if (c.reason === null) {
      show({ action: 'no_retry', label: 'no retry', delay: '', sentence: `This response is not sent to retry handling: rule ${c.rule}.`, rule: c.rule, section: c.section, classified, json: c })
      return
    }
    reason = c.reason
  }
  const { decision, sentence } = api('explain', { request: couchbaseRequest(), reason, policy: couchbasePolicy() })
  show({
    action: decision.action,
    label: decision.action === 'retry' ? 'retry' : 'no retry',
    delay: decision.action === 'retry' ? `after ${decision.delay_ms} ms${decision.capped ? ' (capped)' : ''}${decision.then_cancel ? ', then cancel' : ''}` : `(${decision.cause.replaceAll('_', ' ')})`,
    sentence,
    rule: decision.rule,
    section: decision.section,
    classified,
    json: decision
  })
}

// ---- MongoDB -----------------------------------------------------------------------------------
function showMongo () {
  const kind = value('mongo_kind')
  const error = { kind, labels: value('mongo_labels').split(',').map((s) => s.trim()).filter(Boolean) }
  if (kind === 'server') error.code = num('mongo_code')
  const request = { operation: { name: value('mongo_op') }, attempts: num('attempts'), server: value('mongo_server'), random: Number(value('random')) }
  const d = api('mongodb_decide', { request, error })
  show({
    action: d.action,
    label: d.action,
    delay: d.action === 'retry' ? `after ${d.delay_ms ?? 0} ms` : '',
    sentence: d.action === 'retry'
      ? `Retry the ${value('mongo_op')} (retry ${d.attempts}); the error carries ${d.labels.length ? d.labels.join(', ') : 'no labels'}.`
      : `Surface the error from ${value('mongo_op')}; labels: ${d.labels.length ? d.labels.join(', ') : 'none'}.`,
    rule: d.rule,
    section: d.section,
    classified: d.retryable_as ? `retryable as ${d.retryable_as}` : '',
    json: d
  })
}

// ---- HTTP --------------------------------------------------------------------------------------
function showHttp () {
  const attempt = value('http_kind') === 'network_error'
    ? { kind: 'network_error' }
    : { kind: 'response', status: num('http_status'), ...(value('retry_after').trim() ? { retry_after: value('retry_after').trim() } : {}) }
  const d = api('http_next', {
    loop: { max_attempts: num('max_attempts'), deadline_ms: num('timeout') },
    state: { attempts: num('attempts') + 1, elapsed_ms: num('elapsed') },
    attempt,
    now_unix_ms: Date.now(),
    random: Number(value('random'))
  })
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

function show (r) {
  $('action').textContent = r.label
  $('action').className = `badge ${r.action}`
  $('delay').textContent = r.delay
  $('sentence').textContent = r.sentence
  $('rule').textContent = r.rule
  $('section').textContent = r.section
  $('classified').textContent = r.classified || '—'
  $('json').textContent = JSON.stringify(r.json, null, 2)
}

// ---- the schedule ------------------------------------------------------------------------------
function draws (r, n) {
  // A reproducible sequence of draws from the one on the form (golden-ratio steps).
  return Array.from({ length: n }, (_, i) => (r + i * 0.6180339887) % 1)
}

function showSchedule () {
  const pattern = PATTERNS[value('pattern')]
  const request = couchbaseRequest()
  delete request.random
  const t = api('simulate', {
    request, outcomes: pattern.outcomes, repeat_last: pattern.repeat, latency_ms: num('latency'),
    draws: draws(Number(value('random')), 64), policy: couchbasePolicy()
  })
  drawTimeline(t, request.timeout_ms, request.elapsed_ms)
  const endings = { succeeded: 'succeeded', failed: 'failed (not retried)', timed_out: 'timed out', attempt_limit: 'stopped at the attempt limit' }
  $('ending').textContent = `${endings[t.ending]} after ${t.steps.length} attempt${t.steps.length === 1 ? '' : 's'}: ${t.total_ms} ms in all, ${t.waited_ms} ms waiting (timeout ${request.timeout_ms} ms)`
  const rows = t.steps.map((s) => {
    const d = s.decision
    const decision = !d ? 'success' : d.action === 'retry' ? `retry (${d.rule})${d.then_cancel ? ', then cancel' : ''}` : `fail (${d.rule})`
    const tr = document.createElement('tr')
    for (const [text, cls] of [[s.attempt, 'num'], [s.sent_at_ms, 'num'], [s.reason ?? 'success', ''], [decision, ''], [d && d.action === 'retry' ? d.delay_ms : '', 'num']]) {
      const td = document.createElement('td')
      td.textContent = String(text)
      if (cls) td.className = cls
      tr.append(td)
    }
    return tr
  })
  $('steps').tBodies[0].replaceChildren(...rows)
}

function svgEl (name, attrs, text) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', name)
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v)
  if (text !== undefined) el.textContent = text
  return el
}

function drawTimeline (t, timeout, start) {
  const svg = $('timeline')
  const W = 800; const left = 10; const right = 10
  const end = Math.max(t.total_ms, timeout, 1)
  const x = (ms) => left + ((ms - start) / Math.max(end - start, 1)) * (W - left - right)
  const items = [svgEl('line', { x1: left, x2: W - right, y1: 120, y2: 120, stroke: '#9aa5b1' })]
  let attempts = 0
  t.steps.forEach((s, i) => {
    const failed = s.reason !== null
    items.push(svgEl('rect', { class: 'attempt', x: x(s.sent_at_ms), y: 70, width: Math.max(x(s.done_at_ms) - x(s.sent_at_ms), 3), height: 40, fill: failed ? 'var(--fail)' : 'var(--ok)' }))
    attempts++
    const next = t.steps[i + 1]
    const d = s.decision
    if (d && d.action === 'retry') {
      const waitEnd = next ? next.sent_at_ms : s.done_at_ms + d.delay_ms
      items.push(svgEl('rect', { class: 'wait', x: x(s.done_at_ms), y: 80, width: Math.max(x(waitEnd) - x(s.done_at_ms), 1), height: 20, fill: 'var(--wait)' }))
    }
    if (t.steps.length <= 30) items.push(svgEl('text', { x: x(s.sent_at_ms), y: 62, 'font-size': 11, fill: '#5b6673' }, String(s.attempt)))
  })
  items.push(svgEl('line', { x1: x(timeout), x2: x(timeout), y1: 20, y2: 135, stroke: 'var(--no)', 'stroke-dasharray': '4 3' }))
  items.push(svgEl('text', { x: Math.min(x(timeout) + 4, W - 110), y: 32, 'font-size': 12, fill: 'var(--no)' }, `timeout ${timeout} ms`))
  items.push(svgEl('text', { x: left, y: 150, 'font-size': 11, fill: '#5b6673' }, `${start} ms`))
  items.push(svgEl('text', { x: W - right - 90, y: 150, 'font-size': 11, fill: '#5b6673' }, `${end} ms`))
  svg.replaceChildren(...items)
  svg.dataset.attempts = String(attempts)
  svg.dataset.ending = t.ending
}

// ---- wiring ------------------------------------------------------------------------------------
function render () {
  updateVisibility()
  saveState()
  const err = $('error')
  try {
    const profile = value('profile')
    if (profile === 'couchbase') { showCouchbase(); showSchedule() } else if (profile === 'mongodb') showMongo(); else showHttp()
    err.hidden = true
  } catch (e) {
    err.hidden = false
    err.textContent = `${e.code ?? 'error'}: ${e.message}`
  }
}

await init()
$('version').textContent = `Engine ${rp.version()}.`
const tables = JSON.parse(rp.tables())
fill(field('operation'), tables.kv_operations.map((o) => o.name))
fill(field('reason'), tables.reasons.map((r) => r.name))
fill(field('mongo_op'), tables.mongo_operations.map((o) => o.name))
loadState()
// Controls outside the <form> element (form="form") do not bubble to it: listen on the document.
for (const type of ['input', 'change']) {
  document.addEventListener(type, (e) => { if (e.target.form === form) render() })
}
window.addEventListener('hashchange', () => { loadState(); render() })
render()
document.body.dataset.ready = '1'
