// The README's "gRPC and AWS" example over this package's Node entry (index.mjs), as written; the
// typed gRPC and AWS API itself runs here through the Node package's suites (make test-node-api:
// grpc-aws, grpc-aws-negative and every pending gRPC, AWS and run fixture with SPEC_FIXTURES_DIR).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

test('the README\'s "gRPC and AWS" runs and prints what it shows', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')
  const code = readme.match(/## gRPC and AWS[^]*?```js\n([^]*?)```/)[1]
  mkdirSync(fileURLToPath(new URL('../build/', import.meta.url)), { recursive: true })
  const file = fileURLToPath(new URL('../build/readme-grpc-aws.mjs', import.meta.url))
  writeFileSync(file, code.replace("'retrypolicy-wasm'", JSON.stringify(new URL('../index.mjs', import.meta.url).href)))
  const printed = code.split('// prints:\n')[1].split('\n').filter(Boolean).map((l) => l.replace(/^\/\/ {3}/, ''))
  // By hand: the original attempt, a hedge after 500 ms (one more may follow), the third at once
  // after a non-fatal status (none left to hedge), OK; a 429's first retry 0.5 x 1 s, and the
  // limiter at its 0.5 tokens/s minimum with no token yet: the next comes after 2 s.
  assert.deepEqual(printed, [
    'original_attempt: send 1, next hedge in 500 ms, end null',
    'hedging_delay_over: send 1, next hedge in 500 ms, end null',
    'non_fatal_status: send 1, next hedge in null ms, end null',
    'ok: send 0, next hedge in null ms, end succeeded',
    'throttling_status: retry in 500 ms; limiter wait_for_token, then token_taken at 2 s',
  ])
  assert.equal(execFileSync(process.execPath, [file], { encoding: 'utf8' }).trim(), printed.join('\n'))
})
