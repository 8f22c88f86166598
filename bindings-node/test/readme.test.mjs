// The README's examples run, as written (ESM; the quickstart also as CommonJS), and print what they show.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { spawnSync } from 'node:child_process'
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

test('"wrap a call" runs as written: two retries, then the answer', { skip }, () => {
  const wrap = readme.split('## Wrap a call')[1].match(/```js\n([^]*?)```/)[1]
  const out = run(['--input-type=module', '-e'], wrap)
  assert.equal(out, [
    'ECONNRESET: retry after 1 ms (best_effort_backoff)',
    'ECONNRESET: retry after 2 ms (best_effort_backoff)',
    'price 42 after 3 attempts',
    '',
  ].join('\n'))
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
