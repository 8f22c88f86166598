// Issue 31 item 11: every panic of an instance is a typed `internal` error and the instance stays
// usable (src/errors.rs, `start`; README.md, "A Rust panic"). On the testing build
// (build/pkg-testing, with `panicForTest`): its own instance, in this file's own process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const rp = require('../build/pkg-testing/nodejs/retrypolicy_wasm.js')

const request = { service: 'kv', operation: 'get', attempts: 0, elapsedMs: 0, timeoutMs: 2500 }
const isInternal = (e) => e instanceof Error && e.name === 'RetryPolicyError' && e.code === 'internal' &&
  e.field === '' && /retrypolicy bug: .*deliberate panic for the panic-path test/s.test(e.message)
/** The panic's error: the test fails if the call returns. */
function panicked (fn) {
  try { fn() } catch (e) { return e }
  assert.fail('the call returned')
}

test('three panics in a row are each a typed internal error; objects made before them and later calls still work', () => {
  const policy = rp.Policy.parse('{"backoff": {"kind": "fixed", "delay_ms": 250}}')
  // Before the fix the second and third were `RuntimeError: unreachable` (std saw a panic inside the hook).
  for (let i = 0; i < 3; i++) assert.ok(isInternal(panicked(() => rp.panicForTest())), `panic ${i + 1}`)
  const d = rp.decide(request, 'KV_TEMPORARY_FAILURE', policy)
  assert.deepEqual([d.action, d.delay_ms, d.reason], ['retry', 250, 'KV_TEMPORARY_FAILURE'])
  assert.ok(JSON.parse(rp.tables()).reasons.length > 0)
  assert.ok(isInternal(panicked(() => rp.panicForTest())))
  assert.equal(rp.decide(request, 'KV_TEMPORARY_FAILURE', policy).delay_ms, 250)
})

test('panics leave no shadow stack behind: 20,000 panics, then normal calls', () => {
  // Before the rewind each panic kept its Rust frames (about 160 bytes): after some 6,500 panics
  // every call trapped with `memory access out of bounds`.
  const policy = rp.Policy.parse('{}')
  let typed = 0
  for (let i = 0; i < 20000; i++) if (isInternal(panicked(() => rp.panicForTest()))) typed++
  assert.equal(typed, 20000)
  assert.equal(rp.decide(request, 'KV_TEMPORARY_FAILURE', policy).action, 'retry')
})

test('a panic in a call made from JavaScript the module called is typed, and the outer call goes on', () => {
  const policy = rp.Policy.parse('{}')
  // The host strategy calls back into the module, which panics: the inner call's error is typed and
  // the outer call's frames are intact (its answer is the strategy's), 1,000 times.
  const seen = []
  for (let i = 0; i < 1000; i++) {
    const d = rp.decideWith(request, 'KV_TEMPORARY_FAILURE', policy, () => { seen.push(isInternal(panicked(() => rp.panicForTest()))); return 7 }, policy)
    assert.deepEqual([d.action, d.delay_ms, d.rule], ['retry', 7, 'custom_strategy'])
  }
  assert.equal(seen.filter(Boolean).length, 1000)
  // Not caught by the strategy, it passes through the outer call unchanged.
  assert.ok(isInternal(panicked(() => rp.decideWith(request, 'KV_TEMPORARY_FAILURE', policy, () => rp.panicForTest(), policy))))
  assert.equal(rp.decideWith(request, 'KV_TEMPORARY_FAILURE', policy, () => 9, policy).delay_ms, 9)
  assert.ok(isInternal(panicked(() => rp.panicForTest())))
})

test("a library's Error.prepareStackTrace neither stops the rewind nor fools the check", () => {
  const policy = rp.Policy.parse('{}')
  // Every frame on one line: read as is, a nested call would look like the only one.
  const format = (_e, frames) => frames.map(String).join(' | ')
  Error.prepareStackTrace = format
  try {
    for (let i = 0; i < 500; i++) {
      // After the inner panic the strategy calls the module again: had the pointer been rewound
      // under the outer call, those calls would write over the outer call's live frames.
      const d = rp.decideWith(request, 'KV_TEMPORARY_FAILURE', policy, () => {
        assert.ok(isInternal(panicked(() => rp.panicForTest())))
        for (let j = 0; j < 3; j++) assert.equal(rp.decideWith({ ...request, attempts: j }, 'KV_LOCKED', policy, () => 11 + j, policy).delay_ms, 11 + j)
        return 7
      }, policy)
      assert.deepEqual([d.action, d.delay_ms, d.reason, d.attempts], ['retry', 7, 'KV_TEMPORARY_FAILURE', 0])
    }
    for (let i = 0; i < 20000; i++) assert.ok(isInternal(panicked(() => rp.panicForTest())))
    assert.equal(Error.prepareStackTrace, format)
    assert.equal(rp.decide(request, 'KV_TEMPORARY_FAILURE', policy).action, 'retry')
  } finally {
    delete Error.prepareStackTrace
  }
})
