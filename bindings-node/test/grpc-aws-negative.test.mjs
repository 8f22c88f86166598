// The fixture runner's gRPC and AWS adapters must fail a wrong expectation: every expected key of
// every gRPC, AWS and gRPC/AWS run case (spec-fixtures/cases),
// changed on purpose one at a time, and every expected error's code and field, fail the typed run,
// each by its id; the cases as they are pass.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const runner = fileURLToPath(new URL('./fixtures.test.mjs', import.meta.url))
const FIXTURES = fileURLToPath(new URL('../../spec-fixtures/', import.meta.url))
const FUNCTIONS = new Set(['grpc_service_config', 'grpc_retry', 'grpc_hedge', 'aws_retry', 'aws_retry_run', 'aws_rate_limiter_run'])

/** The corpus's gRPC and AWS fixture documents (the run cases by their file's name). */
function documents() {
  const out = []
  const folder = path.join(FIXTURES, 'cases')
  for (const name of fs.readdirSync(folder).filter((n) => n.endsWith('.json')).sort()) {
    const doc = JSON.parse(fs.readFileSync(path.join(folder, name), 'utf8'))
    if (FUNCTIONS.has(doc.function) || name === 'run_grpc_aws.json') out.push(doc)
  }
  return out
}

/** A value surely unlike `v` (and unlike anything the API gives for it). */
function changed(v) {
  if (typeof v === 'number') return Number.isInteger(v) ? v + 1 : v + 0.5
  if (typeof v === 'string') return `${v}-changed`
  if (typeof v === 'boolean') return !v
  if (v === null) return 'changed'
  if (Array.isArray(v)) return [...v, 'changed']
  return { ...v, changed: true }
}

test('each gRPC and AWS expectation changed on purpose fails the typed run, by id', () => {
  const docs = documents()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-grpc-aws-negative-'))
  const wrong = []
  let right = 0
  try {
    docs.forEach((doc, d) => {
      const cases = []
      for (const c of doc.cases) {
        cases.push(c)
        right++
        const variant = (suffix, patch) => {
          const id = `${c.id}--wrong-${suffix}`
          wrong.push(id)
          cases.push({ ...c, id, ...patch })
        }
        if (c.expect !== undefined) {
          for (const k of Object.keys(c.expect)) variant(k, { expect: { ...c.expect, [k]: changed(c.expect[k]) } })
        } else {
          variant('code', { expect_error: c.expect_error === 'out_of_range' ? 'invalid_type' : 'out_of_range' })
          if (c.error_field !== undefined) variant('field', { error_field: `${c.error_field}_changed` })
        }
      }
      fs.writeFileSync(path.join(dir, `${d}.json`), JSON.stringify({ ...doc, cases }))
    })
    assert.ok(docs.length >= 7 && wrong.length > 600, `${docs.length} files, ${wrong.length} changed expectations`)
    // A child of `node --test` would otherwise report to this runner instead of running on its own.
    const { NODE_TEST_CONTEXT: _ignored, ...env } = process.env
    const r = spawnSync(process.execPath, ['--test', '--test-reporter=tap', runner], {
      env: { ...env, SPEC_FIXTURES_DIR: dir }, encoding: 'utf8', maxBuffer: 1 << 28,
    })
    const failed = new Set([...r.stdout.matchAll(/^not ok \d+ - .*: (\S+)$/gm)].map((m) => m[1]))
    const passedWrong = wrong.filter((id) => !failed.has(id))
    assert.deepEqual(passedWrong, [], 'changed expectations the runner passed')
    assert.equal(failed.size, wrong.length, 'only the changed cases fail')
    assert.match(r.stdout, new RegExp(`^# fail ${wrong.length}$`, 'm'))
    assert.ok(right >= 256, `${right} cases`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
