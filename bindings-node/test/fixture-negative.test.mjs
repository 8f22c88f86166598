// The fixture runner itself must fail: on a wrong expectation, and on a missing SPEC_FIXTURES_DIR.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const runner = fileURLToPath(new URL('./fixtures.test.mjs', import.meta.url))

function runWith(dir) {
  // A child of `node --test` would otherwise report to this runner instead of running on its own.
  const { NODE_TEST_CONTEXT: _ignored, ...env } = process.env
  return spawnSync(process.execPath, ['--test', '--test-reporter=tap', runner], {
    env: { ...env, SPEC_FIXTURES_DIR: dir },
    encoding: 'utf8',
  })
}

test('a wrong case in SPEC_FIXTURES_DIR fails the run, by id', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-negative-'))
  try {
    const doc = {
      schemaVersion: 1, function: 'controlled_backoff', source: 'negative check',
      cases: [
        { id: 'wrong-on-purpose', description: 'attempt 0 is 1 ms, not 2', source: 'RFC 0049', input: { attempt: 0 }, expect: { delay_ms: 2 } },
        { id: 'right-on-purpose', description: 'attempt 0 is 1 ms', source: 'RFC 0049', input: { attempt: 0 }, expect: { delay_ms: 1 } },
      ],
    }
    fs.writeFileSync(path.join(dir, 'wrong.json'), JSON.stringify(doc))
    fs.writeFileSync(path.join(dir, 'unknown.json'), JSON.stringify({ ...doc, function: 'no_such_function', cases: [doc.cases[1]] }))
    const r = runWith(dir)
    assert.notEqual(r.status, 0, 'the runner passed a wrong expectation')
    assert.match(r.stdout, /not ok \d+ - .*wrong-on-purpose/)
    assert.match(r.stdout, /ok \d+ - .*right-on-purpose/)
    assert.match(r.stdout, /not ok \d+ - .*unknown\.json: right-on-purpose/)
    assert.match(r.stdout, /^# fail 2$/m)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a SPEC_FIXTURES_DIR that does not exist fails the run', () => {
  const r = runWith(path.join(os.tmpdir(), 'retrypolicy-no-such-folder'))
  assert.notEqual(r.status, 0)
  assert.match(r.stdout, /is not a folder/)
})
