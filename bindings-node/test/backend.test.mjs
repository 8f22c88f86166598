// The facade's backend interface (lib/api.js, BACKEND): the napi addon and the wasm module's
// adapter (bindings-wasm/backend.mjs, when the wasm package is built) each provide every member,
// and a backend lacking one is refused by name, before any call.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { existsSync, readFileSync } from 'node:fs'

const require = createRequire(import.meta.url)
const { makeApi, BACKEND } = require('../lib/api.js')
const WASM = new URL('../../bindings-wasm/pkg/web/retrypolicy_wasm_bg.wasm', import.meta.url)

/** The wasm module's adapter, or undefined when the wasm package is not built here. */
async function wasmBackend() {
  if (!existsSync(WASM)) return undefined
  const wasm = await import('../../bindings-wasm/pkg/web/retrypolicy_wasm.js')
  wasm.initSync({ module: readFileSync(WASM) })
  return (await import('../../bindings-wasm/backend.mjs')).backendOf(wasm)
}

test('the napi addon and the wasm adapter each provide every member of the backend interface', async (t) => {
  const backends = { napi: require('../index.js'), wasm: await wasmBackend() }
  if (backends.wasm === undefined) t.diagnostic('bindings-wasm is not built: only the addon is checked')
  for (const [name, backend] of Object.entries(backends)) {
    if (backend === undefined) continue
    assert.deepEqual(BACKEND.filter((m) => typeof backend[m] !== 'function'), [], name)
    const api = makeApi(backend)
    assert.equal(api.decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED', new api.Policy({ jitter: 'none' })).delayMs, 1, name)
  }
})

test('a backend lacking a member is refused naming it', () => {
  const backend = Object.fromEntries(BACKEND.map((m) => [m, () => {}]))
  delete backend.RunHandle
  assert.throws(() => makeApi(backend), { name: 'TypeError', message: /no function RunHandle/ })
  assert.throws(() => makeApi(undefined), { name: 'TypeError', message: /no function version/ })
})
