// The README's examples run, as written (ESM; the quickstart also as CommonJS), and print what they show.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { spawn, spawnSync } from 'node:child_process'
import http from 'node:http'
import { fileURLToPath } from 'node:url'
import { which } from './binding.mjs'

const pkg = fileURLToPath(new URL('..', import.meta.url))
const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8')
const quickstart = readme.split('## Quickstart')[1].match(/```js\n([^]*?)```/)[1]
const skip = which !== 'native' && 'the README documents the native package'

function run(args, source) {
  const r = spawnSync(process.execPath, [...args, source], { cwd: pkg, encoding: 'utf8' })
  assert.equal(r.status, 0, `exit ${r.status}\n${r.stderr}`)
  return r.stdout
}

test('the quickstart runs as an ES module', { skip }, () => {
  const out = run(['--input-type=module', '-e'], quickstart)
  assert.match(out, /^retry 8 after 500 ms, capped to the timeout, then cancel \(reason KV_NOT_MY_VBUCKET/m)
  assert.match(out, /^retry 1 after 0 ms \(reason KV_TEMPORARY_FAILURE, rule best_effort_backoff/m)
})

test('the quickstart runs as CommonJS', { skip }, () => {
  const cjs = quickstart
    .replace("import assert from 'node:assert/strict'", "const assert = require('node:assert/strict')")
    .replace("import * as rp from 'retrypolicy'", "const rp = require('retrypolicy')")
  assert.notEqual(cjs, quickstart)
  assert.match(run(['--input-type=commonjs', '-e'], cjs), /^retry 8 after 500 ms/m)
})

/** Runs `source` as an ES module in a child process (the servers answer meanwhile), with `env` added. */
function runAsync(source, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], { cwd: pkg, env: { ...process.env, ...env } })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}\n${err}`))))
  })
}

/** A server on 127.0.0.1 answering each request with the next of `answers` (`[status, headers]`), then 200 `{price: 42}`; it notes when each request arrived by its own clock. */
async function priceServer(answers) {
  const arrivals = []
  const server = http.createServer((req, res) => {
    arrivals.push(performance.now())
    const [status, headers] = answers[arrivals.length - 1] ?? [200, { 'content-type': 'application/json' }]
    res.writeHead(status, headers)
    res.end(status === 200 ? JSON.stringify({ price: 42 }) : 'busy')
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, arrivals, url: `http://127.0.0.1:${server.address().port}/price` }
}

const wrap = readme.split('## Wrap a call')[1].match(/```js\n([^]*?)```/)[1]

test('"wrap a call" runs as written against a server answering 503, 503, then 200', { skip }, async () => {
  const { server, arrivals, url } = await priceServer([[503, {}], [503, {}]])
  try {
    const out = await runAsync(wrap, { PRICE_URL: url })
    assert.equal(out, [
      'retry after 1 ms (best_effort_backoff): Error: HTTP 503',
      'retry after 2 ms (best_effort_backoff): Error: HTTP 503',
      'price 42',
      '',
    ].join('\n'))
    assert.equal(arrivals.length, 3)
  } finally {
    server.close()
  }
})

test('"wrap a call" honours a 429 Retry-After of 1 s, then succeeds', { skip }, async () => {
  const { server, arrivals, url } = await priceServer([[429, { 'retry-after': '1' }]])
  try {
    const out = await runAsync(wrap, { PRICE_URL: url })
    assert.equal(out, ['retry after 1000 ms (retry_after): Error: HTTP 429', 'price 42', ''].join('\n'))
    assert.equal(arrivals.length, 2)
    // a lower bound by the server's own clock (the timer may fire a hair early: 1 ms of slack)
    assert.ok(arrivals[1] - arrivals[0] >= 999, `second request ${arrivals[1] - arrivals[0]} ms after the first`)
  } finally {
    server.close()
  }
})

test('"MongoDB and HTTP" runs as written and prints what the README shows', { skip }, () => {
  const [, code, printed] = readme.split('## MongoDB and HTTP')[1].match(/```js\n([^]*?)```\nprints\n```\n([^]*?)```/)
  assert.equal(run(['--input-type=module', '-e'], code), printed)
  assert.equal(printed, [
    'retry 100 service_unavailable', // RFC 9110: 503 is transient; the default backoff starts at 100 ms
    'transient deadline_before_retry 3000', // the 3 s asked for would pass the deadline: stop now, say so
    'retry read retryable_read_error',
    '{"$addToSet":{"pending":"inc-1"}} {"_id":"counter","pending":"inc-1"}',
    '',
  ].join('\n'))
})

test('"Budgets and breakers" runs as written and prints what the README shows', { skip }, () => {
  const [, code, printed] = readme.split('## Budgets and breakers')[1].match(/```js\n([^]*?)```\nprints\n```\n([^]*?)```/)
  assert.equal(run(['--input-type=module', '-e'], code), printed)
  assert.equal(printed, [
    // gRFC A6: four failures leave 6 tokens (retried), the fifth 5 (at half: not); then none is retried
    'request 1: attempts 5, then budget_exhausted (token_bucket_at_or_below_half)',
    'request 2: attempts 1, then budget_exhausted (token_bucket_at_or_below_half)',
    'request 3: attempts 1, then budget_exhausted (token_bucket_at_or_below_half)',
    // Couchbase: tripped at 4 of 4 failed; the canary goes more than 1000 ms after it opened (at 3)
    'CIRCUIT_BREAKER_OPEN true breaker_canary_in_flight',
    '{"version":1,"state":"half_open","since_ms":1004,"window_start_ms":0,"total":4,"failures":4} half_open',
    '',
  ].join('\n'))
})

test('"Observability" runs as written and prints what the README shows', { skip }, () => {
  const [, code, printed] = readme.split('## Observability')[1].match(/```js\n([^]*?)```\nprints\n```\n([^]*?)```/)
  assert.equal(run(['--input-type=module', '-e'], code), printed)
  const reason = '"retrypolicy.reason":"SOCKET_CLOSED_WHILE_IN_FLIGHT"'
  assert.equal(printed, [
    // three attempts at a KV get that keeps failing (a reset: may have been sent, the get is idempotent),
    // capped at 3; the breaker of volume 3 trips on the third failure, before the run gives up
    'breaker: closed -> open (breaker_tripped)',
    '3 2 gave_up max_attempts_reached',
    'retrypolicy.retry retrypolicy.retry retrypolicy.give_up',
    'retrypolicy.attempts 3 {}',
    `retrypolicy.retries 2 {${reason},"retrypolicy.rule":"best_effort_backoff"}`,
    `retrypolicy.give_ups 1 {"retrypolicy.end":"gave_up",${reason},"retrypolicy.rule":"max_attempts_reached"}`,
    // the breaker is named 'kv': both breaker metrics carry it
    'retrypolicy.breaker.state_changes 1 {"retrypolicy.breaker.name":"kv","retrypolicy.breaker.from":"closed","retrypolicy.breaker.to":"open","retrypolicy.rule":"breaker_tripped"}',
    'retrypolicy.breaker.state 1 {"retrypolicy.breaker.name":"kv"}',
    '',
  ].join('\n'))
})

test("the root README's Observability tables render spec-fixtures/observability.json", () => {
  // Each metric, span event and attribute of the shared table, with its kind, unit and attributes,
  // so the copy this README points to cannot drift from the JSON.
  const table = JSON.parse(fs.readFileSync(new URL('../../spec-fixtures/observability.json', import.meta.url), 'utf8'))
  const root = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const section = root.split('## Observability\n')[1].split('\n## ')[0]
  const rows = new Map(section.split('\n').filter((l) => l.startsWith('| `')).map((l) => [l.split('|')[1].trim(), l]))
  const names = (list) => list.map((a) => `\`${a}\``).join(', ')
  for (const m of table.metrics) {
    assert.ok(rows.get(`\`${m.name}\``)?.includes(`| \`${m.name}\` | ${m.instrument} | \`${m.unit}\` | ${names(m.attributes) || 'none'} |`), m.name)
  }
  for (const e of table.span_events) assert.ok(rows.get(`\`${e.name}\``)?.includes(names(e.attributes)), e.name)
  const documented = [...Object.keys(table.attributes), ...table.metrics.map((m) => m.name), ...table.span_events.map((e) => e.name)]
  assert.deepEqual([...rows.keys()].map((n) => n.replaceAll('`', '')).sort(), documented.sort())
  assert.match(readme, /root README's\s+"Observability"/)
})

test("the root README's Node example in Observability is this README's, which runs above", () => {
  const root = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8')
  const block = (text) => text.split('## Observability\n')[1].split('\n## ')[0].match(/```js\n([^]*?)```/)[1]
  assert.equal(block(root), block(readme))
})
