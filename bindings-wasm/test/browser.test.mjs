// End to end: the explorer served on 127.0.0.1, driven in Debian's Chromium by playwright-core.
// Expected schedules are worked out by hand from the spec (comments give the arithmetic), never
// read back from the page. Screenshots of every view (the three domains, the retry storm, gRPC hedging, AWS adaptive) at 1280x900 and 390x844 land in
// build/screenshots/ (git-ignored) and their paths are printed.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { copyFileSync, mkdtempSync, rmSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import { chromium } from 'playwright-core'
import { serve } from '../scripts/serve.mjs'

const SHOTS = fileURLToPath(new URL('../build/screenshots/', import.meta.url))
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
const DESKTOP = { width: 1280, height: 900 }
const PHONE = { width: 390, height: 844 }
let server, context, page, profileDir
const responses = []

before(async () => {
  mkdirSync(SHOTS, { recursive: true })
  server = await serve(0)
  profileDir = mkdtempSync(join(tmpdir(), 'rp-chromium-'))
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium', headless: true, args: FLAGS, viewport: DESKTOP
  })
  page = await context.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('response', (r) => responses.push(r))
  page.errors = errors
})

after(async () => {
  await context?.close()
  await server?.close()
  if (profileDir) rmSync(profileDir, { recursive: true, force: true })
})

// Loads the page afresh with `hash` (a change of hash alone would keep the page and its state).
async function open (hash) {
  await page.goto('about:blank')
  await page.goto(`${server.url}/demo/index.html#${hash}`)
  await page.waitForSelector('body[data-ready="1"]')
}

const text = (sel) => page.locator(sel).textContent()

// The schedule table's cells, row by row.
const rows = () => page.$$eval('#steps tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)))

test('the page is served compressed, with its content types, on 127.0.0.1', async () => {
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  responses.length = 0
  await open('profile=couchbase')
  const byName = (end) => responses.find((r) => r.url().split('#')[0].endsWith(end))
  const want = { 'index.html': 'text/html', 'app.js': 'text/javascript', 'style.css': 'text/css', '.wasm': 'application/wasm' }
  for (const [end, type] of Object.entries(want)) {
    const r = byName(end)
    assert.ok(r, `no response for ${end}`)
    const h = await r.allHeaders()
    assert.equal(h['content-type'].split(';')[0], type, end)
    assert.match(h['content-encoding'] ?? '', /^(gzip|br)$/, `${end} is not compressed`)
  }
  // Without Accept-Encoding the bytes go as they are; with gzip they unzip to the same file.
  const get = (headers) => new Promise((resolve, reject) => {
    request(`${server.url}/pkg/web/retrypolicy_wasm_bg.wasm`, { headers }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }))
    }).on('error', reject).end()
  })
  const file = readFileSync(new URL('../pkg/web/retrypolicy_wasm_bg.wasm', import.meta.url))
  const plain = await get({})
  assert.equal(plain.headers['content-encoding'], undefined)
  assert.ok(plain.body.equals(file))
  const zipped = await get({ 'accept-encoding': 'gzip' })
  assert.equal(zipped.headers['content-encoding'], 'gzip')
  assert.equal(zipped.headers['content-type'], 'application/wasm')
  assert.ok(zipped.body.length < file.length / 2, `gzip body ${zipped.body.length} of ${file.length} bytes`)
  assert.ok(gunzipSync(zipped.body).equals(file))
  const refused = await get({ 'accept-encoding': 'gzip;q=0, br;q=0' })
  assert.equal(refused.headers['content-encoding'], undefined)
})

test('a KV upsert whose socket closed in flight is not retried, a get is', async () => {
  await open('profile=couchbase&service=kv&operation=upsert&failure=reason&reason=SOCKET_CLOSED_WHILE_IN_FLIGHT&timeout=2500')
  assert.equal(await text('#action'), 'no retry')
  assert.match(await text('#sentence'), /KV upsert is not idempotent/)
  assert.equal(await text('#rule'), 'best_effort_not_idempotent')
  assert.equal(await text('#section'), 'RFC 0049, Best Effort')
  await page.selectOption('select[name=operation]', 'get')
  assert.equal(await text('#action'), 'retry')
  assert.match(await text('#delay'), /^after 1 ms/)
  assert.match(page.url(), /operation=get/)
})

test('the Couchbase schedule draws one bar per attempt and says how it ended', async () => {
  await open('profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED&timeout=2500&pattern=temporary&latency=2')
  // A run of the core's machine: waits of 1, 2, 4 ... 256 (511 ms), then 500 ms three times; each
  // attempt takes 2 ms. The 13th attempt is sent at 13 x 2 - 2 + 2011 = 2035 ms and fails at 2037:
  // best effort's 500 ms, capped to the 463 ms left, then cancel: the run ends there, timed out.
  assert.equal(await page.locator('#timeline').getAttribute('data-attempts'), '13')
  assert.equal(await page.locator('#timeline rect.attempt').count(), 13)
  assert.equal(await text('#ending'), 'timed out after 13 attempts: 2037 ms in all, 2011 ms waiting (rule best_effort_backoff; timeout 2500 ms)')
  assert.deepEqual((await rows())[12], ['13', '2035', 'KV_TEMPORARY_FAILURE', 'timed_out (best_effort_backoff)', ''])
  await page.selectOption('select[name=pattern]', 'closed-once')
  assert.equal(await page.locator('#timeline rect.attempt').count(), 2)
  assert.match(await text('#ending'), /^succeeded after 2 attempts/)
  await page.selectOption('select[name=pattern]', 'nmvb-storm')
  await page.selectOption('select[name=strategy]', 'fail_fast')
  assert.equal(await page.locator('#timeline rect.attempt').count(), 7)
})

test('a withTransaction run: a transient error, an unknown commit result, then success', async () => {
  await open('profile=mongodb&txn_events=transient,unknown_commit,success&latency=2&random=0.5')
  // Each callback run and each commit takes 2 ms. begin -> start_transaction (attempt 1). The
  // callback fails at 2 ms with a network error, labelled TransientTransactionError: backoff
  // floor(0.5 x min(5 x 1.5^1, 500)) = floor(3.75) = 3 ms, abort first. Attempt 2 runs 5-7 ms and
  // returns -> commit; the commit's network error at 9 ms is UnknownTransactionCommitResult ->
  // retry_commit; the second commit succeeds at 11 ms -> return.
  assert.deepEqual(await rows(), [
    ['1', '0', 'begin', 'start_transaction', ''],
    ['2', '2', 'callback: network error', 'retry_transaction (transient_transaction_error), abort first', '3'],
    ['3', '7', 'callback returned', 'commit', ''],
    ['4', '9', 'commit: network error', 'retry_commit (unknown_commit_result)', ''],
    ['5', '11', 'commit: ok', 'return', '']
  ])
  assert.match(await text('#ending'), /^returned after 2 transaction attempts, 11 ms/)
  assert.equal(await page.locator('#timeline rect.attempt').count(), 4)
  assert.equal(await page.locator('#timeline rect.wait').count(), 1)
  assert.equal(await page.locator('#timeline').getAttribute('data-ending'), 'return')

  // A callback error without labels is raised at once, after aborting.
  await page.fill('input[name=txn_events]', 'error')
  assert.deepEqual((await rows())[1], ['2', '2', 'callback: duplicate key (11000)', 'raise (callback_error_not_transient), abort first', ''])

  // timeoutMS 10, the transient error every time. Draws: 0.5, then +0.618034 mod 1 = 0.118034.
  // Attempt 1 fails at 2 ms: backoff floor(0.5 x 7.5) = 3 (2 + 3 < 10, retry). Attempt 2 fails
  // at 7 ms: floor(0.118034 x 11.25) = 1 (7 + 1 < 10, retry). Attempt 3 fails at 10 ms, which
  // has reached timeoutMS: a timeout error carrying the last error's labels.
  await page.fill('input[name=txn_events]', 'transient')
  await page.check('input[name=txn_repeat]')
  await page.fill('input[name=txn_timeout]', '10')
  const r = await rows()
  assert.deepEqual(r.map((row) => [row[1], row[4]]), [['0', ''], ['2', '3'], ['7', '1'], ['10', '']])
  assert.equal(r[3][3], 'raise_timeout (retry_timeout_exceeded), abort first')
  assert.match(await text('#ending'), /^raised a timeout error after 3 transaction attempts, 10 ms: rule retry_timeout_exceeded, labels TransientTransactionError/)
  assert.equal(await page.locator('#timeline line.limit').count(), 1)

  // The buttons add outcomes to the list.
  await page.fill('input[name=txn_events]', '')
  await page.click('button[data-add=commit_transient]')
  await page.click('button[data-add=success]')
  assert.equal(await page.inputValue('input[name=txn_events]'), 'commit_transient, success')
})

test('an HTTP step: 503, 429 with Retry-After, a network error, then 200', async () => {
  await open('profile=http&http_method=GET&max_attempts=5&timeout=2500&latency=2&http_results=503,429 ra=1,network,200')
  // Backoff 100 ms x 2^(attempt-1) (seed 004's default loop), Retry-After in seconds:
  // #1 sent 0, 503 at 2 -> 100 ms; #2 sent 102, 429 at 104 -> Retry-After 1 s; #3 sent 1104,
  // network error at 1106 -> 400 ms; #4 sent 1506, 200 at 1508: final.
  assert.deepEqual(await rows(), [
    ['1', '0', '503', 'retry after 100 ms (service_unavailable)', '100'],
    ['2', '102', '429, Retry-After: 1', 'retry after 1000 ms (retry_after)', '1000'],
    ['3', '1104', 'network error', 'retry after 400 ms (network_error)', '400'],
    ['4', '1506', '200', 'succeeded (success_2xx)', '']
  ])
  assert.match(await text('#ending'), /^succeeded after 4 attempts, 1508 ms/)
  assert.equal(await page.locator('#timeline rect.attempt').count(), 4)
  assert.equal(await page.locator('#timeline rect.wait').count(), 3)
  assert.equal(await text('#timeline .limit-label'), 'deadline 2500 ms')
})

test('an HTTP step that reaches the deadline stops and shows what the server asked for', async () => {
  await open('profile=http&http_method=GET&max_attempts=5&timeout=2500&latency=2&http_results=503,429 ra=3')
  // #2's 429 arrives at 104 ms asking for 3 s: 104 + 3000 = 3104 is past the 2500 ms deadline,
  // so the run ends now, timed out, with the server's 3000 ms.
  const r = await rows()
  assert.equal(r.length, 2)
  assert.deepEqual(r[1], ['2', '102', '429, Retry-After: 3', 'timed_out (deadline_before_retry); the server asked for 3000 ms', ''])
  assert.equal(await text('#ending'), 'timed out after 2 attempts, 104 ms (rule deadline_before_retry): the server asked to retry after 3000 ms (at 3104 ms), the deadline is 2500 ms')
  assert.equal(await text('#timeline .marker-label'), 'server: retry at 3104 ms')
  assert.equal(await page.locator('#timeline line.limit').count(), 1)
})

test('a POST is not sent again once it may have reached the server (RFC 9110 §9.2.2)', async () => {
  await open('profile=http&http_method=POST&max_attempts=5&timeout=2500&latency=2&http_results=503')
  assert.deepEqual(await rows(), [['1', '0', '503', 'gave_up (not_idempotent_after_send)', '']])
  // A refused connection was never sent: retried after the first backoff, 100 ms.
  await page.fill('input[name=http_results]', 'refused, 200')
  assert.deepEqual((await rows()).map((row) => row[4]), ['100', ''])
  await page.selectOption('select[name=http_method]', 'PUT')
  await page.fill('input[name=http_results]', '503, 200')
  assert.deepEqual((await rows()).map((row) => row[3]), ['retry after 100 ms (service_unavailable)', 'succeeded (success_2xx)'])
})

// What the explorer says OpenTelemetry would record (the signals table): each row's attempt, then
// the signal in the form of observability.json's examples, its attributes read back from the text.
// (The cell holds `name (instrument)`, then one `attribute=value` a line.)
const recorded = async () => (await page.$$eval('#signals tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent))))
  .map(([attempt, value, cell]) => {
    const [head, ...lines] = cell.split('\n')
    const [, name, kind] = /^(\S+) \((.+)\)$/.exec(head)
    const attributes = Object.fromEntries(lines.map((kv) => kv.split('=')).map(([k, v]) => [k, /^\d+$/.test(v) ? Number(v) : v]))
    return [Number(attempt), kind === 'span event' ? { event: name, attributes } : { metric: name, value: Number(value), attributes }]
  })

// The table of names and its examples, written by hand from the runs of spec-fixtures/cases/run.json.
const OBSERVABILITY = JSON.parse(readFileSync(new URL('../../spec-fixtures/observability.json', import.meta.url), 'utf8'))
// The explorer's views that replay each example's run: the same rules, budget, breaker and outcomes
// (Couchbase's TEMPORARY_FAILURE is the fixture's KV status 0x86), with the page's own latency.
const EXAMPLE_VIEWS = {
  'run-breaker-refusal-costs-the-budget-nothing': 'profile=couchbase&service=kv&operation=get&strategy=best_effort&jitter=none&timeout=10000&pattern=temporary-once&latency=10&run_budget=retry_quota&run_breaker=1&run_volume=1&run_sleep=100',
  'run-http-budget-refusal-stops': 'profile=http&http_method=GET&max_attempts=5&timeout=10000&latency=5&http_results=503&run_budget=token_bucket&run_tokens=6',
  'run-http-503-503-200': 'profile=http&http_method=GET&max_attempts=5&timeout=10000&latency=5&http_results=503,503,200'
}

test('the HTTP and Couchbase timelines record what observability.json\'s examples say, in its order, attempt by attempt', async () => {
  assert.deepEqual(Object.keys(EXAMPLE_VIEWS).sort(), OBSERVABILITY.examples.map((e) => e.run_fixture).sort())
  for (const example of OBSERVABILITY.examples) {
    await open(EXAMPLE_VIEWS[example.run_fixture])
    const got = await recorded()
    assert.deepEqual(got.map(([, signal]) => signal), example.signals, example.run_fixture)
    // Every name the page shows is the table's.
    const names = new Set([...OBSERVABILITY.metrics, ...OBSERVABILITY.span_events].map((m) => m.name))
    for (const [, signal] of got) assert.ok(names.has(signal.metric ?? signal.event), JSON.stringify(signal))
  }
  // The breaker's run, attempt by attempt: attempt 1 (sent at 0, failed at 10) trips the breaker
  // and is retried after 1 ms; at 11 the breaker, open since 10, keeps attempt 2 back for the rest
  // of its 100 ms window; at 111 attempt 2 is the canary (half-open) and succeeds at 121 (closed).
  await open(EXAMPLE_VIEWS['run-breaker-refusal-costs-the-budget-nothing'])
  assert.deepEqual((await recorded()).map(([attempt]) => attempt), [1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
  assert.deepEqual(await rows(), [
    ['1', '0', 'KV_TEMPORARY_FAILURE', 'retry after 1 ms (best_effort_backoff)', '1'],
    ['', '11', '#2 kept back: the breaker is open', 'wait 100 ms (breaker_wait)', '100'],
    ['2', '111', 'success', 'succeeded (attempt_succeeded)', '']
  ])
  // The run's statistics: 1 + 100 ms asked to wait, the last event at 121 ms.
  assert.equal(await text('#run-stats'), 'Its statistics (stats): 2 attempts, 1 retry, 101 ms waited, 121 ms elapsed, 0 budget refusals, 1 breaker rejection; end succeeded, last rule attempt_succeeded.')
  // Each attempt's bar says what it records; the breaker's wait says why.
  const titles = await page.$$eval('#timeline title', (ts) => ts.map((t) => t.textContent))
  assert.deepEqual(titles, [
    'attempt 1: 0 to 10 ms, failed; records retrypolicy.attempts, retrypolicy.breaker.state_changes, retrypolicy.breaker.state, retrypolicy.retries, retrypolicy.retry',
    'wait 1 ms (10 to 11 ms): before attempt 2',
    'wait 100 ms (11 to 111 ms): the breaker keeps attempt 2 back',
    'attempt 2: 111 to 121 ms, succeeded; records retrypolicy.breaker.rejections, retrypolicy.breaker.state_changes, retrypolicy.breaker.state, retrypolicy.attempts, retrypolicy.breaker.state_changes, retrypolicy.breaker.state'
  ])
  // HTTP: 503 at 5 ms, 100 ms, 503 at 110, 200 ms, 200 at 315.
  await open(EXAMPLE_VIEWS['run-http-503-503-200'])
  assert.equal(await text('#run-stats'), 'Its statistics (stats): 3 attempts, 2 retries, 300 ms waited, 315 ms elapsed, 0 budget refusals, 0 breaker rejections; end succeeded, last rule success_2xx.')
  // The budget's refusal ends the run at the first failure: one refusal, a give-up.
  await open(EXAMPLE_VIEWS['run-http-budget-refusal-stops'])
  assert.deepEqual(await rows(), [['1', '0', '503', 'gave_up (token_bucket_at_or_below_half)', '']])
  assert.match(await text('#run-stats'), /, 1 budget refusal, 0 breaker rejections; end gave_up, last rule token_bucket_at_or_below_half\.$/)
})

// A step whose call made two breaker changes (spec-fixtures/cases/run_observed.json,
// run-breaker-two-changes-in-one-step): the explorer's signals name each, in order, from the core's
// `run` answer read by the page's own engine.
test('the explorer records each breaker change of a step, in order, and reads the step\'s signal', async () => {
  const fixture = JSON.parse(readFileSync(new URL('../../spec-fixtures/cases/run_observed.json', import.meta.url), 'utf8'))
    .cases.find((c) => c.id === 'run-breaker-two-changes-in-one-step')
  await open('profile=couchbase')
  const signals = await page.evaluate(async (input) => {
    const engine = await import('./engine.js')
    const observe = await import('./observe.js')
    await Promise.all([engine.ready, observe.ready])
    return engine.api('run', input).steps.map((step) => observe.stepSignals(step))
  }, fixture.input)
  const named = { 'retrypolicy.breaker.name': 'default' }
  const change = (from, to, rule, state) => [
    { kind: 'counter', name: 'retrypolicy.breaker.state_changes', value: 1, attributes: { ...named, 'retrypolicy.breaker.from': from, 'retrypolicy.breaker.to': to, 'retrypolicy.rule': rule } },
    { kind: 'gauge', name: 'retrypolicy.breaker.state', value: state, attributes: named }
  ]
  assert.deepEqual(signals, [
    [...change('half_open', 'open', 'canary_timed_out', 1), ...change('open', 'half_open', 'breaker_canary', 2),
      { kind: 'counter', name: 'retrypolicy.attempts', value: 1, attributes: {} }],
    change('half_open', 'closed', 'canary_succeeded', 0)
  ])
})

test('the schedule\'s budget and breaker fields show when they apply, and their errors beside them', async () => {
  await open('profile=couchbase&pattern=temporary&run_budget=percentage')
  assert.equal(await page.locator('input[name=run_tokens]').isVisible(), false)
  assert.equal(await page.locator('input[name=run_volume]').isVisible(), false)
  await page.selectOption('select[name=run_budget]', 'token_bucket')
  assert.equal(await page.locator('input[name=run_tokens]').isVisible(), true)
  await page.check('input[name=run_breaker]')
  assert.equal(await page.locator('input[name=run_volume]').isVisible(), true)
  await page.fill('input[name=run_sleep]', 'soon')
  assert.deepEqual((await fieldError('run_sleep')).texts, ['Sleep window (ms): expected a whole number, got "soon"'])
  assert.equal(await text('#action'), 'no retry') // the decision stands
  // An HTTP status the core refuses, in the picked results: beside the results.
  await open('profile=http&http_results=999')
  assert.match((await fieldError('http_results')).texts[0], /^Results, in order: 999 is out of range/)
  // The MongoDB view has none of them.
  await open('profile=mongodb')
  assert.equal(await page.locator('select[name=run_budget]').isVisible(), false)
  assert.equal(await page.locator('#signals').isVisible(), false)
})

test('a response code is classified first, and the link reproduces the view', async () => {
  await open('profile=couchbase&service=kv&operation=unlock&failure=status&status=0x09&timeout=2500')
  assert.equal(await text('#action'), 'no retry')
  assert.match(await text('#classified'), /surface as cas_mismatch/)
  await page.fill('input[name=status]', '0x86')
  assert.equal(await text('#action'), 'retry')
  const url = page.url()
  await page.goto('about:blank')
  await page.goto(url)
  await page.waitForSelector('body[data-ready="1"]')
  assert.equal(await page.inputValue('input[name=status]'), '0x86')
  assert.equal(await text('#action'), 'retry')
})

test('MongoDB and HTTP profiles decide through the same engine', async () => {
  await open('profile=mongodb&mongo_op=updateMany&mongo_kind=network&attempts=0')
  assert.equal(await text('#action'), 'surface')
  await page.selectOption('select[name=mongo_op]', 'updateOne')
  assert.equal(await text('#action'), 'retry')
  await open('profile=http&http_kind=response&http_status=503&attempts=0&elapsed=0&timeout=10000&max_attempts=5')
  assert.equal(await text('#action'), 'retry')
  await page.selectOption('select[name=http_method]', 'POST')
  assert.equal(await text('#action'), 'stop')
  assert.equal(await text('#rule'), 'not_idempotent_after_send')
  await page.fill('input[name=http_status]', '404')
  await page.selectOption('select[name=http_method]', 'GET')
  assert.equal(await text('#action'), 'stop')
})

// The error shown beside the control named `name`: its text, whether it is visible, and whether it
// sits inside that control's own label; and the panels' own error lines that show.
const fieldError = (name) => page.evaluate((name) => {
  const control = document.querySelector(`[name="${name}"]`)
  const notes = [...document.querySelectorAll('.field-error')].filter((n) => n.offsetParent !== null)
  const mine = notes.filter((n) => control.closest('label').contains(n))
  const panelLines = [...document.querySelectorAll('.panel-error')].filter((l) => !l.hidden).map((l) => l.textContent)
  return { texts: mine.map((n) => n.textContent), others: notes.length - mine.length, panelLines, invalid: control.getAttribute('aria-invalid') }
}, name)

// Every visible row of the decision's list has a value (no empty Rule or Spec section row).
const emptyRows = () => page.$$eval('#result dd', (dds) => dds.filter((dd) => dd.offsetParent !== null && dd.textContent.trim() === '').map((dd) => dd.id))

test('bad input in the decision panel shows beside its own field, in its label\'s words, and leaves no empty rows', async () => {
  await open('profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED')
  await page.fill('input[name=timeout]', '-5')
  const e = await fieldError('timeout')
  // The page's own check: the label is "Timeout / deadline (ms)", the wire name timeout_ms never shows.
  assert.deepEqual(e.texts, ['Timeout / deadline (ms): expected a whole number, got "-5"'])
  assert.equal(e.invalid, 'true')
  assert.deepEqual(e.panelLines, [])
  // The decision and the schedule both read the field: one note, beside it, and no stale result.
  assert.equal(e.others, 0)
  assert.equal(await page.locator('#result').isVisible(), false)
  assert.equal(await page.locator('#schedule-out').isVisible(), false)
  await page.fill('input[name=timeout]', '2500')
  assert.deepEqual((await fieldError('timeout')).texts, [])
  assert.equal(await page.locator('#result').isVisible(), true)
  assert.deepEqual(await emptyRows(), [])
  // A value the core refuses (its typed error names the wire field `status`): shown beside the
  // "Status / code" field under that name.
  await open('profile=couchbase&service=kv&operation=get&failure=status&status=zz')
  const z = await fieldError('status')
  assert.equal(z.texts.length, 1)
  assert.match(z.texts[0], /^Status \/ code: zz is out of range/)
  assert.deepEqual(z.panelLines, [])
  // Decisions without a classification or a section hide those rows instead of leaving them empty.
  for (const hash of ['profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED',
    'profile=mongodb&mongo_op=find&mongo_kind=network', 'profile=http&http_kind=network_refused&http_method=POST']) {
    await open(hash)
    assert.deepEqual(await emptyRows(), [], hash)
    assert.equal(await page.locator('#rule').isVisible(), true, hash)
  }
})

test('bad input in the schedule panel shows beside its own field and leaves the decision standing', async () => {
  await open('profile=http&http_results=503,teapot')
  const e = await fieldError('http_results')
  assert.equal(e.texts.length, 1)
  assert.match(e.texts[0], /^Results, in order: "teapot" is not a result/)
  assert.equal(await text('#action'), 'retry')
  assert.equal(await page.locator('#steps').isVisible(), false)
  // The core itself refuses a callback outcome where it asked for a commit: its typed error shows
  // beside the list of outcomes.
  await open('profile=mongodb&txn_events=unknown_commit,transient')
  const m = await fieldError('txn_events')
  assert.equal(m.texts.length, 1)
  assert.match(m.texts[0], /^Outcomes, in order: /)
  assert.equal(await page.locator('#timeline').getAttribute('data-ending'), 'error')
  assert.deepEqual(m.panelLines, [])
})

// The storm's compare table: its rows' cells, and each chart bar's figure.
const stormRows = () => page.$$eval('#storm-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)))
const STORM = 'profile=storm&storm_rps=100&storm_duration=10000&storm_failure_rate=1&storm_latency=10&storm_op=get&storm_timeout=2500&storm_reason=KV_TEMPORARY_FAILURE&storm_strategy=best_effort'

test('the retry storm: 13,000 attempts without a budget, 1,004 with the gRPC bucket, 1,100 with the AWS quota', async () => {
  await open(`${STORM}&storm_budget=token_bucket`)
  // 100 requests/s for 10 s = 1,000 requests. Without a budget each KV get is sent 13 times in its
  // 2.5 s (sends at 0, 11, 23, 37, 55, 81, 123, 197, 335, 601, 1111, 1621, 2131 ms: waits 1, 2, 4
  // ... 256, then 500 ms, plus 10 ms latency each): 13,000. gRPC's bucket (gRFC A6: 10 tokens, a
  // failure takes one, a retry only while tokens > 5): the first four failures are retried, none
  // after: 1,004; every request is refused a retry once (996 at their first failure, the four
  // retried ones at their second). The AWS quota (500 tokens, 5 a retry, nothing refunded): 100
  // retries, 1,100 attempts, every request refused once.
  assert.equal(await text('#storm-table caption'), 'Each run: 1,000 requests')
  const r = await stormRows()
  assert.deepEqual(r.slice(0, 3), [
    ['none', '13,000', '13.00x', '0', '0'],
    ['token_bucket', '1,004', '1.00x', '1,000', '0'],
    ['retry_quota', '1,100', '1.10x', '1,000', '0']
  ])
  assert.equal(r[3][0], 'percentage')
  assert.equal(r.length, 4)
  assert.deepEqual(await page.$$eval('#storm-table tbody tr', (trs) => trs.map((tr) => tr.classList.contains('chosen'))), [false, true, false, false])
  assert.match(await text('#storm-ending'), /^With the token_bucket budget: 1,000 requests sent 1,004 attempts to the server \(1\.00x\); 0 succeeded, 1,000 failed/)
  assert.deepEqual((await page.locator('#storm-chart .amp-label').allTextContents()).slice(0, 3), ['13.00x', '1.00x', '1.10x'])
  assert.equal(await page.locator('#storm-chart rect.amp').count(), 4)

  // Each kind runs with its own fields. A bucket of 20 retries while tokens > 10: the first nine
  // failures, 1,009 attempts; a retry cost of 10 spends the 500 tokens in 50 retries: 1,050.
  await page.fill('input[name=b_max_tokens]', '20')
  await page.fill('input[name=b_retry_cost]', '10')
  assert.deepEqual((await stormRows()).slice(1, 3).map((row) => row[1]), ['1,009', '1,050'])
  assert.match(page.url(), /b_max_tokens=20/)

  // Behind Couchbase's breaker (opens after 20 requests at 100% errors), an attempt while open
  // never reaches the server: fewer attempts are sent than requests issued.
  await page.check('input[name=storm_breaker]')
  const none = (await stormRows())[0]
  assert.ok(Number(none[1].replace(',', '')) < 1000, `attempts sent ${none[1]}`)
  assert.notEqual(none[4], '0')
  assert.match(await text('#storm-ending'), /; the breaker kept [\d,]+ attempts from the server\.$/)
})

test('the budget fields come pre-filled with the defaults of their sources', async () => {
  await open('profile=storm')
  // gRFC A6's example bucket; aws-sdk-go-v2's retry quota; Finagle's RetryBudget().
  const want = { b_max_tokens: '10', b_token_ratio: '0.1', b_capacity: '500', b_retry_cost: '5', b_timeout_cost: '10', b_no_retry_increment: '1', b_percent: '20', b_ttl_ms: '10000', b_min_retries_per_sec: '10' }
  for (const [name, v] of Object.entries(want)) assert.equal(await page.inputValue(`input[name=${name}]`), v, name)
})

test('a budget event by event: the gRPC bucket stops retries at half, the AWS quota refunds a success', async () => {
  await open('profile=storm&storm_budget=token_bucket&b_spacing=100&b_events=request,failure,retry,failure,retry,failure,retry,failure,retry,failure,retry')
  // 10 tokens; a request changes nothing, a failure takes 1 token, a retry costs nothing; a retry
  // is allowed while the balance is above half the bucket, 5 tokens.
  const b = await page.$$eval('#budget-steps tbody tr', (trs) => trs.map((tr) => [tr.cells[1].textContent, tr.cells[3].textContent.split(' ')[0], tr.cells[4].textContent]))
  assert.deepEqual(b, [
    ['0', 'permitted', '10'], ['100', 'permitted', '9'], ['200', 'permitted', '9'],
    ['300', 'permitted', '8'], ['400', 'permitted', '8'], ['500', 'permitted', '7'],
    ['600', 'permitted', '7'], ['700', 'permitted', '6'], ['800', 'permitted', '6'],
    ['900', 'refused', '5'], ['1000', 'refused', '5']
  ])
  assert.equal(await page.locator('#balance-chart circle.event').count(), 11)
  assert.equal(await page.locator('#balance-chart circle.event[fill="var(--no)"]').count(), 2)
  // AWS: 500 tokens; a retry takes 5, a retry of a timeout 10; a success after a retry gives its
  // 5 back, a success without one adds 1.
  await page.selectOption('select[name=storm_budget]', 'retry_quota')
  await page.fill('input[name=b_events]', '')
  for (const e of ['retry', 'retry', 'retry_timeout', 'success_after_retry', 'success']) await page.click(`button[data-add=${e}][data-to=b_events]`)
  assert.equal(await page.inputValue('input[name=b_events]'), 'retry, retry, retry_timeout, success_after_retry, success')
  assert.deepEqual(await page.$$eval('#budget-steps tbody tr', (trs) => trs.map((tr) => tr.cells[4].textContent)), ['495', '490', '480', '485', '486'])
  assert.match(await text('#budget-steps th:last-child'), /tokens/)
  // No budget: nothing to run.
  await page.selectOption('select[name=storm_budget]', 'none')
  assert.equal(await page.locator('#events-none').isVisible(), true)
  assert.equal(await page.locator('#events-out').isVisible(), false)
})

test('bad input in the storm and budget panels shows beside its own field, in its label\'s words', async () => {
  await open(`${STORM}&storm_failure_rate=1.5`)
  // The core refuses the share (its field: failure_rate); the note names the field as its label does.
  const e = await fieldError('storm_failure_rate')
  assert.equal(e.texts.length, 1)
  assert.match(e.texts[0], /^Failure rate \(0 to 1\): 1\.5 is out of range/)
  assert.doesNotMatch(e.texts[0], /failure_rate/)
  assert.deepEqual(e.panelLines, [])
  assert.equal(await page.locator('#storm-out').isVisible(), false)
  await page.fill('input[name=storm_failure_rate]', '0')
  assert.equal(await page.locator('.field-error').count(), 0)
  // Nothing fails: every request is sent once, whatever the budget.
  assert.deepEqual((await stormRows()).map((row) => row[1]), ['1,000', '1,000', '1,000', '1,000'])
  // The budget panel's list: its own note, and the storm's results stand.
  await page.fill('input[name=b_events]', 'failure, teapot')
  const b = await fieldError('b_events')
  assert.equal(b.texts.length, 1)
  assert.match(b.texts[0], /^Events, in order: "teapot" is not one of/)
  assert.equal(await page.locator('#storm-out').isVisible(), true)
  assert.equal(await page.locator('#events-out').isVisible(), false)
  // A budget field the core refuses (Finagle's window, budget.ttl_ms on the wire): one note, beside it.
  await page.fill('input[name=b_events]', 'failure')
  await page.selectOption('select[name=storm_budget]', 'percentage')
  await page.fill('input[name=b_ttl_ms]', '10')
  const w = await fieldError('b_ttl_ms')
  assert.equal(w.texts.length, 1)
  assert.match(w.texts[0], /^Window \(ms\): 10 is out of range/)
  assert.doesNotMatch(w.texts[0], /ttl_ms/)
  assert.equal(w.others, 0)
})

// gRPC hedging (gRFC A6, "Hedging Policy"). A table's cells, row by row; each hedge's bar: its
// number, when it was sent, when it ended (answered or cancelled), and what became of it.
const cells = (id) => page.$$eval(`#${id} tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)))
const hedgeBars = () => page.$$eval('#hedge-chart rect.hedge', (rs) => rs.map((r) => [r.dataset.n, r.dataset.sent, r.dataset.end, r.dataset.outcome]))
const HEDGED_CALL = JSON.parse(readFileSync(new URL('../../examples/grpc/hedged-call.json', import.meta.url), 'utf8'))

test('a hedged gRPC call: a hedge each hedgingDelay, one at once after a non-fatal status, pushback, and the OK cancels the rest', async () => {
  await open('profile=grpc')
  // The defaults are examples/grpc/hedged-call.json's policy, and the script answers so that the
  // call's events are that example's: maxAttempts 4, hedgingDelay 0.5 s, UNAVAILABLE, INTERNAL and
  // ABORTED non-fatal. #1 goes at 0, the delay runs out at 500: #2. #1's UNAVAILABLE (620 ms after
  // it went) is non-fatal: #3 goes at once, the next hedge 500 ms later (1120). #2's INTERNAL at 700
  // carries pushback 100: the next hedge at 800 instead, #4, the last one (4 sent). #4's OK at
  // 800 + 50 = 850 is the call's answer; #3 (sent at 620, answering 400 ms later) is cancelled.
  assert.deepEqual(await cells('hedge-steps'), [
    ['1', '0', 'start', 'send #1; next hedge at 500 ms', 'original_attempt'],
    ['2', '500', 'hedging delay ran out', 'send #2; next hedge at 1000 ms', 'hedging_delay_over'],
    ['3', '620', '#1 answered UNAVAILABLE', 'send #3; next hedge at 1120 ms', 'non_fatal_status'],
    ['4', '700', '#2 answered INTERNAL, pushback 100', 'next hedge at 800 ms', 'pushback'],
    ['5', '800', 'hedging delay ran out', 'send #4', 'hedging_delay_over'],
    ['6', '850', '#4 answered OK', 'cancel #3; the call succeeded', 'ok']
  ])
  const kinds = { start: 'start', 'hedging delay ran out': 'hedge_due' }
  assert.deepEqual((await cells('hedge-steps')).map((r) => [Number(r[1]), kinds[r[2]] ?? 'attempt_ended']),
    HEDGED_CALL.events.map((e) => [e.at_ms, e.event]))
  assert.deepEqual(await hedgeBars(), [['1', '0', '620', 'failed'], ['2', '500', '700', 'failed'], ['3', '620', '850', 'cancelled'], ['4', '800', '850', 'ok']])
  assert.equal(await text('#hedge-ending'), 'Succeeded at 850 ms: #4\'s OK is the call\'s answer; #3 cancelled. 4 attempts sent (rule ok).')
  assert.equal(await page.locator('#hedge-chart line.due').count(), 2)
  // The same answers under a retryPolicy, one at a time: #1's UNAVAILABLE at 620 waits A6's ±20 %
  // jitter with a draw of 0.5 under initialBackoff 0.1 s: 100 × (0.8 + 0.4 × 0.5) = 100 ms; #2 goes
  // at 720, its INTERNAL at 920 carries pushback 100: #3 at 1020, OK 400 ms later: 1420 ms, against
  // hedging's 850.
  assert.deepEqual(await cells('grpc-retry-steps'), [
    ['1', '0', 'UNAVAILABLE', 'retry after 100 ms', 'exponential_backoff'],
    ['2', '720', 'INTERNAL, pushback 100', 'retry after 100 ms', 'pushback'],
    ['3', '1020', 'OK', 'succeeded', 'ok']
  ])
  assert.equal(await text('#grpc-retry-ending'), 'Succeeded at 1420 ms after 3 attempts, one at a time (rule ok).')
  assert.equal(await page.locator('#grpc-retry-chart rect.attempt').count(), 3)
  assert.equal(await page.locator('#grpc-retry-chart rect.wait').count(), 2)
})

test('hedges go at 0, d and 2d; a fatal status ends the call and cancels every other attempt', async () => {
  // hedgingDelay 0.1 s, 3 attempts: sends at 0, 100 and 200 ms, then none (maxAttempts). #3's
  // NOT_FOUND (not in nonFatalStatusCodes) at 200 + 250 = 450 is fatal: the call fails with it and
  // #1 and #2, still out (their answers would come at 1000 and 1100), are cancelled.
  await open('profile=grpc&g_max_attempts=3&g_delay=0.1s&g_script=OK after 1000, OK after 1000, NOT_FOUND after 250')
  assert.deepEqual(await hedgeBars(), [['1', '0', '450', 'cancelled'], ['2', '100', '450', 'cancelled'], ['3', '200', '450', 'fatal']])
  assert.deepEqual((await cells('hedge-steps')).map((r) => [r[1], r[3], r[4]]), [
    ['0', 'send #1; next hedge at 100 ms', 'original_attempt'],
    ['100', 'send #2; next hedge at 200 ms', 'hedging_delay_over'],
    ['200', 'send #3', 'hedging_delay_over'],
    ['450', 'cancel #1, #2; the call failed with NOT_FOUND', 'fatal_status']
  ])
  assert.equal(await text('#hedge-ending'), 'Failed at 450 ms with NOT_FOUND; #1, #2 cancelled. 3 attempts sent (rule fatal_status).')
  // hedgingDelay 0: every attempt at once. Three non-fatal answers: no hedge is left after the
  // first two, and the last one ends the call with its status (A6: no attempt out, none to send).
  await open('profile=grpc&g_max_attempts=3&g_delay=0s&g_script=UNAVAILABLE after 10, UNAVAILABLE after 20, ABORTED after 30')
  assert.deepEqual(await hedgeBars(), [['1', '0', '10', 'failed'], ['2', '0', '20', 'failed'], ['3', '0', '30', 'failed']])
  assert.deepEqual((await cells('hedge-steps')).map((r) => r[4]), ['all_attempts_at_once', 'max_attempts_reached', 'max_attempts_reached', 'max_attempts_reached'])
  assert.equal(await text('#hedge-ending'), 'Failed at 30 ms with ABORTED. 3 attempts sent (rule max_attempts_reached).')
  // Pushback of -1 stops hedging: no hedge after #1's answer; #2 never answers, so the call waits on it.
  await open('profile=grpc&g_max_attempts=4&g_delay=0.1s&g_script=UNAVAILABLE pushback=-1 after 150, no answer')
  assert.deepEqual((await cells('hedge-steps')).map((r) => [r[1], r[3], r[4]]), [
    ['0', 'send #1; next hedge at 100 ms', 'original_attempt'],
    ['100', 'send #2; next hedge at 200 ms', 'hedging_delay_over'],
    ['150', 'nothing', 'pushback_negative']
  ])
  assert.match(await text('#hedge-ending'), /^At 150 ms the call still waits on #2: the script gives it no answer\./)
  // maxAttempts past the client's cap (A6: 5) is read as 5, as the sentence says.
  await open('profile=grpc&g_max_attempts=7&g_delay=0s&g_script=OK after 5')
  assert.equal(await page.locator('#hedge-chart rect.hedge').count(), 5)
  assert.match(await text('#hedge-ending'), /maxAttempts 7 is read as 5, the client's cap\.$/)
})

test('bad input in the gRPC view shows the core\'s typed error beside its own field', async () => {
  // A6: maxAttempts "MUST be a JSON integer value greater than 1".
  await open('profile=grpc&g_max_attempts=1')
  const m = await fieldError('g_max_attempts')
  assert.equal(m.texts.length, 1)
  assert.match(m.texts[0], /^maxAttempts: 1 is out of range/)
  assert.deepEqual(m.panelLines, [])
  assert.equal(await page.locator('#hedge-out').isVisible(), false)
  // A status that is no gRPC code, in an attempt's answer: the core's error, beside the script,
  // once, though both panels read it.
  await open('profile=grpc&g_script=UNAVAILABLE after 10, TEAPOT after 5')
  const t = await fieldError('g_script')
  assert.equal(t.texts.length, 1)
  assert.match(t.texts[0], /^Each attempt's answer, in order: .*TEAPOT/)
  assert.equal(t.others, 0)
  await page.fill('input[name=g_script]', 'OK soon')
  assert.match((await fieldError('g_script')).texts[0], /^Each attempt's answer, in order: "OK soon" is not an answer/)
  // A bad backoff fails the comparison alone: the hedged call stands.
  await open('profile=grpc&g_initial=fast')
  const b = await fieldError('g_initial')
  assert.equal(b.texts.length, 1)
  assert.match(b.texts[0], /^initialBackoff: .*fast/)
  assert.equal(await page.locator('#hedge-out').isVisible(), true)
  assert.equal(await page.locator('#grpc-retry-out').isVisible(), false)
})

// AWS adaptive mode: the rate table's rows (#, sent ms, token, response, answered ms, measured,
// fill rate, change).
test('the AWS rate limiter: off until a throttle, then β × the measured rate, a wait for a token, and the CUBIC curve', async () => {
  await open('profile=aws&a_interval=100&a_latency=50&a_script=ok x10, 503 ThrottlingException, ok x5')
  const r = await cells('rate-steps')
  // Off until the first throttle: every attempt goes when wanted, k × 100 ms, and is answered 50 ms later.
  assert.deepEqual(r.slice(0, 11).map((row) => [row[1], row[2], row[4]]),
    Array.from({ length: 11 }, (_, k) => [String(100 * k), 'limiter_off', String(100 * k + 50)]))
  // The measured rate (botocore RateClocker, half-second buckets, smoothing 0.8): the answer at
  // 550 ms enters the bucket at 500 with 6 responses counted: 6 / 0.5 s = 12/s, × 0.8 = 9.6; the
  // one at 1050 enters the bucket at 1000 with 5: 10/s × 0.8 + 9.6 × 0.2 = 9.92.
  assert.deepEqual([r[4][5], r[5][5], r[9][5], r[10][5]], ['0.000', '9.600', '9.600', '9.920'])
  // Before the throttle the CUBIC curve (0.4 t³ from 0) stays under the minimum fill rate, 0.5:
  // answered at 950 ms, 0.4 × 0.95³ = 0.343 (under 2 × 9.6), raised to the minimum.
  assert.equal(r[9][6], '0.500')
  assert.equal(r[9][7], 'CUBIC curve → 0.343, raised to the minimum')
  // The throttle at 1050 (ThrottlingException is a throttling code): the rate in use is the
  // measured 9.92, β = 0.7: 6.944, and the limiter turns on.
  assert.equal(r[10][3], '503 ThrottlingException (a throttle)')
  assert.equal(r[10][6], '6.944')
  assert.equal(r[10][7], 'throttle: β × rate in use → 6.944; the limiter turns on')
  // #12, wanted at 1100: the bucket held 0.05 + 1 s × 0.5 = 0.55 tokens at 1050 and gains
  // 6.944/s: 0.55 + 0.05 × 6.944 = 0.8972 at 1100; the missing 0.1028 takes 14.8 ms: a wait of
  // 15 ms, then the token, at 1115. Answered at 1165 (same bucket, measured still 9.92): CUBIC with
  // w_max 9.92, K = ∛(9.92 × 0.3 / 0.4) = 1.95220 s: 0.4 × (0.115 − 1.95220)³ + 9.92 = 7.440.
  assert.deepEqual(r[11].slice(1, 7), ['1115', 'waited 15 ms (wait_for_token), then token_taken', 'ok', '1165', '9.920', '7.440'])
  assert.equal(r[11][7], 'CUBIC curve → 7.440')
  assert.equal(await page.locator('#rate-chart circle.throttle').count(), 1)
  assert.ok(await page.locator('#rate-chart rect.token-wait').count() >= 1)
  assert.match(await text('#rate-ending'), /^16 attempts in \d+ ms, 1 throttled; the limiter turned on at 1050 ms;/)
})

test('the AWS default: a 500 is not a throttle, the 503 ThrottlingException after it is, and throttles compound', async () => {
  await open('profile=aws')
  const r = await cells('rate-steps')
  assert.equal(r.length, 40 + 1 + 1 + 30 + 2 + 40)
  // examples/aws/standard-2026-500-then-throttled.json's errors, after 40 successes, one every
  // 50 ms: #41 (sent at 2000) a 500 InternalError, #42 (2050) a 503 ThrottlingException.
  assert.deepEqual(r[40].slice(1, 5), ['2000', 'limiter_off', '500 InternalError (not a throttle)', '2050'])
  assert.deepEqual(r[41].slice(1, 5), ['2050', 'limiter_off', '503 ThrottlingException (a throttle)', '2100'])
  // Measured, 10 responses a half second (20/s): 20 × 0.8 = 16 at 500, 16 + 16 × 0.2 = 19.2 at
  // 1000, 19.84 at 1500, 19.968 at 2000 (the 500 counts as a response like any other); the
  // throttle at 2100: β × the measured rate, 0.7 × 19.968 = 13.9776.
  assert.deepEqual([r[9][5], r[19][5], r[29][5], r[39][5], r[40][5], r[41][5], r[41][6]], ['16.000', '19.200', '19.840', '19.968', '19.968', '19.968', '13.978'])
  assert.equal(r[40][7].startsWith('CUBIC curve'), true)
  // The client wants 20/s, the limiter gives about 14/s: attempts wait for a token.
  assert.ok(r.slice(42).some((row) => row[2].startsWith('waited ')))
  // Once the limiter is on, the rate in use is the lower of the measured and the fill rate: the
  // second of two throttles in a row takes 0.7 × the fill rate the first one left (lower than
  // the measured rate), to the table's 3 decimals.
  const [first, second] = [r[72], r[73]].map((row) => ({ measured: Number(row[5]), fill: Number(row[6]), throttle: row[3].endsWith('(a throttle)') }))
  assert.ok(first.throttle && second.throttle)
  assert.ok(first.fill < second.measured)
  assert.ok(Math.abs(second.fill - 0.7 * first.fill) < 0.002, `${second.fill} vs 0.7 × ${first.fill}`)
  assert.equal(await page.locator('#rate-chart circle.throttle').count(), 3)
})

test('bad input in the AWS view shows the core\'s typed error beside its own field', async () => {
  // botocore's BETA is a share kept: the core takes (0, 1).
  await open('profile=aws&a_beta=1.5')
  const b = await fieldError('a_beta')
  assert.equal(b.texts.length, 1)
  assert.match(b.texts[0], /^Share kept after a throttle \(β\): 1\.5 is out of range/)
  assert.equal(await page.locator('#rate-out').isVisible(), false)
  // The core refuses an HTTP status out of 100..=599 in a response.
  await open('profile=aws&a_script=ok, 999 Oops')
  const s = await fieldError('a_script')
  assert.equal(s.texts.length, 1)
  assert.match(s.texts[0], /^Responses, in order: 999 is out of range/)
  await page.fill('input[name=a_script]', 'ok, ???')
  assert.match((await fieldError('a_script')).texts[0], /^Responses, in order: "\?\?\?" is not a response/)
  await page.fill('input[name=a_script]', 'ok x3')
  await page.fill('input[name=a_interval]', 'often')
  assert.deepEqual((await fieldError('a_interval')).texts, ['Send one attempt every (ms): expected a whole number, got "often"'])
})

// Every panel, table and scrolling box fits its width; no two texts of the drawing overlap;
// every select is wide enough for its longest option.
async function layoutProblems () {
  return page.evaluate(() => {
    const problems = []
    const name = (el) => el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}.${el.className?.baseVal ?? el.className}`
    if (document.documentElement.scrollWidth > window.innerWidth) problems.push(`page ${document.documentElement.scrollWidth} > ${window.innerWidth}`)
    for (const el of document.querySelectorAll('*')) {
      if (el.offsetParent === null && el.tagName !== 'BODY') continue
      const ox = getComputedStyle(el).overflowX
      // A table wider than its panel scrolls inside its own .table-wrap (identifiers never break);
      // nothing else may scroll sideways.
      if (el.matches('.table-wrap')) continue
      const boxed = el.matches('.panel, main') || ox === 'auto' || ox === 'scroll'
      if (boxed && el.scrollWidth > el.clientWidth) problems.push(`${name(el)} scrolls sideways: ${el.scrollWidth} > ${el.clientWidth}`)
    }
    for (const drawing of document.querySelectorAll('svg')) {
      if (drawing.getBoundingClientRect().width === 0) continue
      const texts = [...drawing.querySelectorAll('text')].map((t) => ({ t: t.textContent, r: t.getBoundingClientRect() }))
      texts.forEach((a, i) => texts.slice(i + 1).forEach((b) => {
        if (a.r.left < b.r.right && b.r.left < a.r.right && a.r.top < b.r.bottom && b.r.top < a.r.bottom) problems.push(`#${drawing.id} labels "${a.t}" and "${b.t}" overlap`)
      }))
      const box = drawing.getBoundingClientRect()
      for (const x of texts) if (x.r.left < box.left || x.r.right > box.right) problems.push(`#${drawing.id} label "${x.t}" runs off the drawing`)
    }
    const ctx = document.createElement('canvas').getContext('2d')
    for (const s of document.querySelectorAll('select')) {
      if (s.offsetParent === null) continue
      ctx.font = getComputedStyle(s).font
      const widest = Math.max(...[...s.options].map((o) => ctx.measureText(o.text).width))
      // The text box is the select minus its padding and the arrow (about 24 px in Chromium).
      if (widest + 24 + 14 > s.clientWidth) problems.push(`select ${s.name} cuts its options: ${Math.ceil(widest)} px text in ${s.clientWidth} px`)
    }
    return problems
  })
}

// Each view, and a table it must fill.
const VIEWS = {
  couchbase: ['profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS&timeout=2500&pattern=temporary&latency=2', '#steps'],
  mongodb: ['profile=mongodb&mongo_op=estimatedDocumentCount&txn_events=transient,unknown_commit,success', '#steps'],
  http: ['profile=http&http_method=GET&timeout=2500&http_results=503,429 ra=3', '#steps'],
  observed: ['profile=couchbase&service=kv&operation=get&timeout=2500&pattern=temporary&latency=2&run_budget=token_bucket&run_breaker=1', '#signals'],
  storm: [`${STORM}&storm_reason=KV_SYNC_WRITE_RE_COMMIT_IN_PROGRESS&storm_budget=percentage&storm_breaker=1`, '#storm-table'],
  grpc: ['profile=grpc', '#hedge-steps'],
  aws: ['profile=aws', '#rate-steps']
}

for (const [label, size] of [['1280x900', DESKTOP], ['390x844', PHONE]]) {
  test(`each view fits at ${label}; screenshots`, async () => {
    await page.setViewportSize(size)
    for (const [domain, [hash, table]] of Object.entries(VIEWS)) {
      await open(hash)
      await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true })
      assert.deepEqual(await layoutProblems(), [], `${domain} at ${label}`)
      assert.ok(await page.locator(`${table} tbody tr`).count() > 0)
      const path = join(SHOTS, `explorer-${domain}-${label}.png`)
      await page.screenshot({ path, fullPage: true })
      console.log(`screenshot: ${path}`)
    }
    await page.setViewportSize(DESKTOP)
  })
}

// Whether each element the selectors name lies wholly inside the viewport (the first screen, not
// scrolled), and its box.
const onFirstScreen = (selectors) => page.evaluate((selectors) => {
  window.scrollTo(0, 0)
  return selectors.map((sel) => {
    const r = document.querySelector(sel).getBoundingClientRect()
    const inside = r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth
    return { sel, inside, box: [r.left, r.top, r.right, r.bottom].map(Math.round), viewport: [window.innerWidth, window.innerHeight] }
  })
}, selectors)

// For every cell of the visible tables: each identifier in it (letters and digits joined by
// underscores, as KV_TEMPORARY_FAILURE or best_effort_backoff) laid out on one line, measured by
// the lines its text range covers; and a cell holding only an identifier has text one line-height tall.
const brokenIdentifiers = () => page.evaluate(() => {
  const broken = []
  let checked = 0
  for (const td of document.querySelectorAll('td')) {
    if (td.offsetParent === null) continue
    const node = td.firstChild
    if (!node || node.nodeType !== Node.TEXT_NODE) continue
    for (const m of node.data.matchAll(/[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+/g)) {
      checked++
      const range = document.createRange()
      range.setStart(node, m.index)
      range.setEnd(node, m.index + m[0].length)
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)))
      if (lines.size !== 1) broken.push(`${m[0]} on ${lines.size} lines`)
    }
    // (A cell's own box is as tall as its row, which a neighbour's wrapped words may make taller:
    // the text's box is measured instead.)
    if (/^[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+$/.test(node.data)) {
      const range = document.createRange()
      range.selectNodeContents(td)
      const height = range.getBoundingClientRect().height
      const line = parseFloat(getComputedStyle(td).lineHeight)
      if (height > line + 1) broken.push(`${node.data}: ${height} px tall, line-height ${line} px`)
    }
  }
  return { checked, broken }
})

// Failed requests and error responses, recorded from the page's loads.
const failures = []
const recordFailures = () => {
  page.on('requestfailed', (r) => failures.push(`${r.url()}: ${r.failure()?.errorText}`))
  page.on('response', (r) => { if (r.status() >= 400) failures.push(`${r.url()}: ${r.status()}`) })
}

for (const [label, size] of [['1280x900', DESKTOP], ['390x844', PHONE]]) {
  test(`the storm's results, table and chart, are on the first screen at ${label}`, async () => {
    await page.setViewportSize(size)
    try {
      await open(`${STORM}&storm_budget=token_bucket&storm_breaker=1`)
      for (const r of await onFirstScreen(['#storm-table', '#storm-chart'])) assert.ok(r.inside, `${r.sel} at ${r.box} in ${r.viewport}`)
      // The whole table shows, not only its first columns.
      assert.equal(await page.$eval('#storm-table', (t) => t.parentElement.scrollWidth <= t.parentElement.clientWidth), true)
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  })

  test(`budget inputs, table and chart count in one unit, labelled, at ${label}`, async () => {
    await page.setViewportSize(size)
    try {
      await open('profile=storm&storm_budget=token_bucket&b_spacing=100&b_events=request,failure,retry')
      const labelText = (name) => page.$eval(`[name=${name}]`, (c) => c.closest('label').textContent.trim())
      assert.match(await labelText('b_max_tokens'), /\(tokens\)$/)
      assert.match(await labelText('b_token_ratio'), /\(tokens\)$/)
      assert.match(await text('#budget-steps th:last-child'), /^balance \(tokens\)$/)
      assert.match(await text('#balance-unit'), /\(tokens\)/)
      assert.match(await page.locator('#balance-chart text').first().textContent(), /tokens \(highest balance\)$/)
      // The same unit in fact: after a lone request the balance is the bucket size typed in the
      // input; a failure takes one token.
      await page.fill('input[name=b_max_tokens]', '7')
      assert.deepEqual(await page.$$eval('#budget-steps tbody tr', (trs) => trs.map((tr) => tr.cells[4].textContent)), ['7', '6', '6'])
      assert.doesNotMatch(await page.locator('#storm-panel').innerText() + await page.locator('#budget-panel').innerText(), /milli/i)
      // The AWS quota counts in tokens too, in its fields and its table.
      await page.selectOption('select[name=storm_budget]', 'retry_quota')
      for (const name of ['b_capacity', 'b_retry_cost', 'b_timeout_cost', 'b_no_retry_increment']) assert.match(await labelText(name), /\(tokens\)$/, name)
      assert.match(await text('#budget-steps th:last-child'), /^balance \(tokens\)$/)
      assert.equal(await page.$eval('#budget-steps tbody tr', (tr) => tr.cells[4].textContent), await page.inputValue('input[name=b_capacity]'))
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  })

  test(`every drawing has a colour key, and the timeline's crowded labels are counted and every bar titled, at ${label}`, async () => {
    await page.setViewportSize(size)
    // Each colour drawn (bars, dots, lines; not the grey axis) has a visible swatch of that colour
    // in the key that follows its drawing.
    const unkeyed = (svg) => page.$eval(svg, (drawing) => {
      const key = drawing.nextElementSibling
      if (!key?.matches('.legend')) return ['no key after the drawing']
      const swatches = [...key.querySelectorAll('.swatch')].filter((s) => s.offsetParent !== null)
      const keys = new Set(swatches.flatMap((s) => [getComputedStyle(s).backgroundColor, getComputedStyle(s).borderTopColor]))
      const drawn = [...drawing.querySelectorAll('rect, circle, path, line:not(.axis)')]
        .map((el) => [el.getAttribute('class'), getComputedStyle(el)[el.matches('rect, circle') ? 'fill' : 'stroke']])
      return drawn.filter(([, c]) => !keys.has(c)).map(([cls, c]) => `${cls}: ${c}`)
    })
    try {
      for (const hash of ['profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED&timeout=2500&pattern=temporary&latency=2',
        'profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED&timeout=2500&pattern=closed-once&latency=2',
        'profile=http&http_method=GET&timeout=2500&latency=2&http_results=503,429 ra=3',
        'profile=couchbase&service=kv&operation=get&timeout=2500&pattern=temporary&latency=2&run_budget=token_bucket&run_breaker=1']) {
        await open(hash)
        assert.deepEqual(await unkeyed('#timeline'), [], hash)
        const got = await page.evaluate(() => {
          const bars = [...document.querySelectorAll('#timeline rect.attempt, #timeline rect.wait')]
          const untitled = bars.filter((b) => !b.querySelector('title')?.textContent.trim()).length
          const attempts = document.querySelectorAll('#timeline rect.attempt').length
          const labels = document.querySelectorAll('#timeline text.label').length
          const note = document.getElementById('timeline-note')
          return { untitled, attempts, labels, note: note.hidden ? '' : note.textContent }
        })
        assert.equal(got.untitled, 0, hash)
        // Every attempt is either labelled or counted among the labels left out.
        const hidden = got.note ? Number(/^(\d+) of (\d+) /.exec(got.note)[1]) : 0
        if (got.note) assert.equal(Number(/^\d+ of (\d+) /.exec(got.note)[1]), got.attempts, got.note)
        assert.equal(got.labels + hidden, got.attempts, `${hash}: ${got.labels} labels, note "${got.note}"`)
      }
      // The storm's chart and the balance chart (the gRPC bucket refuses the last two retries).
      await open(`${STORM}&storm_budget=token_bucket&b_events=request,failure,retry,failure,retry,failure,retry,failure,retry,failure,retry`)
      assert.deepEqual(await unkeyed('#storm-chart'), [])
      assert.deepEqual(await unkeyed('#balance-chart'), [])
      assert.ok(await page.locator('#balance-chart circle.event[fill="var(--no)"]').count() > 0)
      // The gRPC view's two drawings (the hedges' every outcome: failed, cancelled, OK; fatal; no
      // answer) and the AWS rate chart (both fill-rate lines, a throttle, a wait for a token).
      for (const hash of ['profile=grpc', 'profile=grpc&g_max_attempts=3&g_delay=0.1s&g_script=OK after 1000, OK after 1000, NOT_FOUND after 250',
        'profile=grpc&g_max_attempts=4&g_delay=0.1s&g_script=UNAVAILABLE pushback=-1 after 150, no answer']) {
        await open(hash)
        assert.deepEqual(await unkeyed('#hedge-chart'), [], hash)
        assert.deepEqual(await unkeyed('#grpc-retry-chart'), [], hash)
      }
      await open('profile=aws')
      assert.deepEqual(await unkeyed('#rate-chart'), [])
      for (const cls of ['measured', 'fill', 'fill-off']) assert.equal(await page.locator(`#rate-chart path.${cls}`).count(), 1, cls)
      assert.ok(await page.locator('#rate-chart rect.token-wait').count() > 0)
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  })

  test(`the MongoDB labels placeholder fits, and fields that do not apply hide, at ${label}`, async () => {
    await page.setViewportSize(size)
    try {
      await open('profile=mongodb&mongo_kind=server')
      const fit = await page.$eval('input[name=mongo_labels]', (input) => {
        const style = getComputedStyle(input)
        const ctx = document.createElement('canvas').getContext('2d')
        ctx.font = style.font
        return { text: ctx.measureText(input.placeholder).width, room: input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) }
      })
      assert.ok(fit.text <= fit.room, `placeholder ${Math.ceil(fit.text)} px in ${fit.room} px`)
      assert.equal(await page.locator('input[name=mongo_code]').isVisible(), true)
      await page.selectOption('select[name=mongo_kind]', 'network')
      assert.equal(await page.locator('input[name=mongo_code]').isVisible(), false)
      // HTTP: no status or Retry-After for a network error.
      await open('profile=http&http_kind=network_error')
      assert.equal(await page.locator('input[name=http_status]').isVisible(), false)
      assert.equal(await page.locator('input[name=retry_after]').isVisible(), false)
      await page.selectOption('select[name=http_kind]', 'response')
      assert.equal(await page.locator('input[name=http_status]').isVisible(), true)
      // The random draw only shows where a delay is jittered.
      await open('profile=couchbase&jitter=none')
      assert.equal(await page.locator('input[name=random]').isVisible(), false)
      await page.selectOption('select[name=jitter]', 'full')
      assert.equal(await page.locator('input[name=random]').isVisible(), true)
      await open('profile=http')
      assert.equal(await page.locator('input[name=random]').isVisible(), false)
    } finally {
      await page.setViewportSize(DESKTOP)
    }
  })
}

test('no identifier in a table breaks across lines at 390x844', async () => {
  await page.setViewportSize(PHONE)
  try {
    for (const [domain, [hash]] of Object.entries(VIEWS)) {
      await open(hash)
      const { checked, broken } = await brokenIdentifiers()
      assert.ok(checked > 0, `${domain}: no identifier measured`)
      assert.deepEqual(broken, [], domain)
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, `${domain}: the page scrolls sideways`)
    }
    await open('profile=storm&storm_budget=token_bucket')
    const { checked, broken } = await brokenIdentifiers()
    assert.ok(checked > 0)
    assert.deepEqual(broken, [])
  } finally {
    await page.setViewportSize(DESKTOP)
  }
})

// A browser asks for /favicon.ico unless the page names an icon, and it does so from the browser
// process, which headless Chromium's request events do not show: the page must name an icon that
// needs no request (a data: URL) or one the server has.
test('no request fails, and the icon needs none that could', async () => {
  recordFailures()
  for (const [hash] of Object.values(VIEWS)) await open(hash)
  assert.deepEqual(failures, [])
  const icons = await page.$$eval('link[rel~=icon]', (links) => links.map((l) => l.href))
  assert.ok(icons.length > 0, 'the page names no icon: the browser asks for /favicon.ico, which is missing')
  for (const href of icons) {
    if (href.startsWith('data:')) continue
    const status = await new Promise((resolve, reject) => request(href, (res) => { res.resume(); resolve(res.statusCode) }).on('error', reject).end())
    assert.equal(status, 200, href)
  }
})

// The package's browser entry in a page: retryFetch against an API on 127.0.0.1 (another origin,
// CORS allowed) that answers 503 then 200; the sleep is injected and records what it was asked.
test('a page imports retryFetch and retry from the browser entry: 503 then 200 is two requests and one wait', async () => {
  const hits = []
  const api = createServer((req, res) => {
    hits.push(req.method)
    const status = hits.length === 1 ? 503 : 200
    res.writeHead(status, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' })
    res.end(status === 200 ? 'ok' : 'busy')
  })
  await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve))
  try {
    await page.goto(`${server.url}/demo/index.html`)
    const got = await page.evaluate(async (url) => {
      const { retryFetch, retry } = await import('/browser.mjs')
      const sleeps = []
      const sleep = async (ms) => { sleeps.push(ms) }
      const response = await retryFetch(url, undefined, { maxAttempts: 3, sleep })
      // `retry` in the page too: a refused connection (nothing sent), then a value.
      const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
      const value = await retry(async ({ attempt }) => { if (attempt === 1) throw refused; return attempt }, { operation: { service: 'search' }, timeoutMs: 1000, sleep })
      return { status: response.status, body: await response.text(), sleeps, value }
    }, `http://127.0.0.1:${api.address().port}/orders`)
    // RFC 9110: a 503 to a GET is retried; no Retry-After, so the HTTP loop's first backoff, 100 ms
    // (100 ms × 2^0, no jitter by default); then RFC 0049 best effort's first 1 ms after the refusal.
    assert.deepEqual(got, { status: 200, body: 'ok', sleeps: [100, 1], value: 2 })
    assert.deepEqual(hits, ['GET', 'GET'])
  } finally {
    await new Promise((resolve) => api.close(resolve))
  }
})

test('no hint points the wrong way, and no page error was raised', async () => {
  await open('profile=couchbase')
  for (const hint of await page.locator('.hint').allTextContents()) assert.doesNotMatch(hint, /\b(above|below)\b/)
  assert.deepEqual(page.errors, [])
})

// The browser entry's whole API in a page, as a user loads it: a module script whose bare
// `import ... from 'retrypolicy-wasm'` an import map resolves to browser.mjs (no bundler), and the
// same script bundled by esbuild (pinned in package-lock.json) with the module copied beside the
// bundle, as a bundler's asset step does; then both again over the `./http` export (the HTTP
// module, pkg-http/browser.mjs). Each page decides, meets a typed error, hears an Orchestrator's
// event, makes a retry budget (the HTTP module throws its typed not-built error instead), then
// runs retryFetch against a 127.0.0.1 API (503, then 200) and retry (a refused connection, then a
// value) with an injected sleep.
const PAGE_SCRIPT = `import { decide, Policy, Orchestrator, retry, retryFetch, isRetryPolicyError, RetryBudget } from 'retrypolicy-wasm'
const out = {}
const d = decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED', new Policy({ jitter: 'none' }))
out.decision = [d.action, d.delayMs, d.rule, Object.isFrozen(d)]
try { decide({ service: 'kv', operation: 'get', elapsedMs: -1 }, 'KV_LOCKED') } catch (e) { out.error = [e.code, e.field, isRetryPolicyError(e)] }
const heard = []
const orchestrator = new Orchestrator()
orchestrator.on('decision', (r) => heard.push([r.action, r.delayMs]))
orchestrator.decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_NOT_MY_VBUCKET')
let once = 0
orchestrator.once('decision', () => once++)
for (let i = 0; i < 2; i++) orchestrator.decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED')
out.heard = [heard[0], heard.length, once]
try {
  out.budget = new RetryBudget({ kind: 'token_bucket', max_tokens: 10, token_ratio: 0.1 }).permit(0).permitted
} catch (e) {
  out.budget = [e.code, e.field, isRetryPolicyError(e), e.message.includes('"guards"')]
}
const sleeps = []
const sleep = async (ms) => { sleeps.push(ms) }
const response = await retryFetch(new URL(location.href).searchParams.get('api'), undefined, { maxAttempts: 3, sleep })
out.fetched = [response.status, await response.text()]
const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })
out.retried = await retry(async ({ attempt }) => { if (attempt === 1) throw refused; return attempt }, { operation: { service: 'search' }, timeoutMs: 1000, sleep })
out.sleeps = sleeps
document.body.dataset.out = JSON.stringify(out)
`

/**
 * Writes build/<folder>/: the import-map page, and the esbuild bundle's page with the module beside
 * it, over the browser entry `entry` (browser.mjs, or the `./http` export's) and its module in `pkg`.
 */
async function facadePages (folder, entry, pkg) {
  const { build } = await import('esbuild')
  const dir = fileURLToPath(new URL(`../build/${folder}/`, import.meta.url))
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'app.mjs'), PAGE_SCRIPT)
  const importMap = JSON.stringify({ imports: { 'retrypolicy-wasm': `/${entry}` } })
  writeFileSync(join(dir, 'map.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">${importMap}</script><script type="module" src="app.mjs"></script>`)
  await build({
    entryPoints: [join(dir, 'app.mjs')], bundle: true, format: 'esm', target: 'es2022', platform: 'browser',
    outfile: join(dir, 'bundle.js'), logLevel: 'silent',
    alias: { 'retrypolicy-wasm': fileURLToPath(new URL(`../${entry}`, import.meta.url)) }
  })
  copyFileSync(fileURLToPath(new URL(`../${pkg}/web/retrypolicy_wasm_bg.wasm`, import.meta.url)), join(dir, 'retrypolicy_wasm_bg.wasm'))
  writeFileSync(join(dir, 'bundle.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="bundle.js"></script>')
}

const ENTRIES = [
  // [what, the build folder, the entry, the module's folder, what making a budget answers]
  ['browser entry', 'facade', 'browser.mjs', 'pkg', true],
  ['./http export', 'facade-http', 'pkg-http/browser.mjs', 'pkg-http', ['unknown_name', 'class', true, true]],
]
for (const [what, folder, entry, pkg, budget] of ENTRIES) for (const [name, file] of [['an import map, no bundler', 'map.html'], ['an esbuild bundle', 'bundle.html']]) {
  test(`the ${what}'s API in a page through ${name}: decide, typed errors, Orchestrator, a budget, retryFetch on 127.0.0.1, retry`, async () => {
    await facadePages(folder, entry, pkg)
    const hits = []
    const api = createServer((req, res) => {
      hits.push(req.method)
      const status = hits.length === 1 ? 503 : 200
      res.writeHead(status, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' })
      res.end(status === 200 ? 'ok' : 'busy')
    })
    await new Promise((resolve) => api.listen(0, '127.0.0.1', resolve))
    const before = page.errors.length
    try {
      await page.goto(`${server.url}/build/${folder}/${file}?api=${encodeURIComponent(`http://127.0.0.1:${api.address().port}/orders`)}`)
      await page.waitForSelector('body[data-out]', { state: 'attached', timeout: 15000 })
        .catch((e) => assert.fail(`${e.message}: ${page.errors.slice(before)}`))
      const out = JSON.parse(await page.locator('body').getAttribute('data-out'))
      assert.deepEqual(out, {
        // RFC 0049 best effort, first retry of a KV get after KV_LOCKED, no jitter: 1 ms; frozen, camelCase.
        decision: ['retry', 1, 'best_effort_backoff', true],
        error: ['invalid_duration', 'elapsedMs', true],
        // KV_NOT_MY_VBUCKET is always retried with RFC 0049's controlled backoff (1, 10, 50, 100, 500,
        // 1000 ms): 1 ms before the first retry.
        // Then two more decisions: \`on\` hears all three, \`once\` only the first of those two.
        heard: [['retry', 1], 3, 1],
        // A token bucket of 10 starts full, above half: a retry is permitted (gRFC A6); the HTTP
        // module has no budgets and throws its typed not-built error naming "guards".
        budget,
        fetched: [200, 'ok'],
        retried: 2,
        // The HTTP loop's first backoff after a 503 with no Retry-After (100 ms), then best effort's 1 ms.
        sleeps: [100, 1]
      })
      assert.deepEqual(hits, ['GET', 'GET'])
      assert.deepEqual(page.errors.slice(before), [])
    } finally {
      await new Promise((resolve) => api.close(resolve))
    }
  })
}
