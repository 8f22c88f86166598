// The realistic example runs and shows what it promises: the naive client over-counts, the
// two-step rewrite with mongodb.decide counts exactly (and matches the Python example's story).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const example = fileURLToPath(new URL('../../examples/node/flaky-counter.mjs', import.meta.url))

test('examples/node/flaky-counter.mjs: naive over-counts, the policy counts exactly', () => {
  const out = spawnSync(process.execPath, [example], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(out.status, 0, out.stdout + out.stderr)
  assert.match(out.stdout, /7 increments reported done, counter = 9, pending = \[\]: over-counted/)
  assert.match(out.stdout, /7 increments reported done, counter = 7, pending = \[\]: exact/)
  assert.match(out.stdout, /command error 2 -> surface \(no_retryable_write_error_label\)/)
})
