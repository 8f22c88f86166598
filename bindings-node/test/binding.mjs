// The one place that chooses which build the tests exercise, so every suite stays
// binding-agnostic: RETRYPOLICY_BINDING=native (default) loads this package (the napi addon);
// RETRYPOLICY_BINDING=wasm loads the wasm build, which exposes the same API, from
// RETRYPOLICY_WASM_ENTRY (default ../../bindings-wasm/index.mjs).
import { fileURLToPath, pathToFileURL } from 'node:url'
import path from 'node:path'

export const which = process.env.RETRYPOLICY_BINDING ?? 'native'

async function load() {
  if (which === 'native') return (await import('retrypolicy')).default
  if (which === 'wasm') {
    const here = path.dirname(fileURLToPath(import.meta.url))
    const entry = process.env.RETRYPOLICY_WASM_ENTRY ?? path.join(here, '../../bindings-wasm/index.mjs')
    const mod = await import(pathToFileURL(path.resolve(entry)).href)
    return mod.default ?? mod
  }
  throw new Error(`RETRYPOLICY_BINDING must be "native" or "wasm", not ${JSON.stringify(which)}`)
}

/** The retrypolicy API under test. */
const rp = await load()
export default rp
