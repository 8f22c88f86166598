// No panic crosses into JavaScript (SECURITY.md): every function the addon exports runs inside a
// panic boundary. napi-rs catches a panic only in a `#[napi(catch_unwind)]` function, and the raw
// `decide` callback (src/raw.rs) has its own `catch_unwind`; this reads the crate's sources and
// fails on an export without either, naming it. The two benchmark no-ops (feature `bench`, never
// shipped, empty bodies) and the module's registration hook are the exceptions, by name.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

const SRC = join(import.meta.dirname, '..', 'src')
const EXEMPT = new Set(['bench_noop', 'bench_noop_empty', 'register'])

test('every #[napi] function of the addon catches panics', () => {
  const exported = []
  const missing = []
  for (const file of readdirSync(SRC).filter((f) => f.endsWith('.rs'))) {
    const lines = readFileSync(join(SRC, file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (!/^\s*#\[napi\b/.test(line)) return
      let j = i + 1
      while (j < lines.length && /^\s*(#\[|\/\/\/)/.test(lines[j])) j++
      const fn = /\bfn\s+(\w+)/.exec(lines[j])
      if (!fn) return // a struct, an impl block or an object type: its functions carry their own attribute
      exported.push(fn[1])
      if (!line.includes('catch_unwind') && !EXEMPT.has(fn[1])) missing.push(`${file}:${i + 1} ${fn[1]}`)
    })
  }
  assert.ok(exported.length > 20, `found ${exported.length} exported functions: the scan is broken`)
  assert.deepEqual(missing, [], 'exports without catch_unwind')
  const raw = readFileSync(join(SRC, 'raw.rs'), 'utf8')
  assert.match(raw, /match catch_unwind\(body\)/, 'the raw decide callback lost its panic boundary')
})
