// The type definitions compile under `tsc --noEmit --strict`, including the lines that must not.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const pkg = fileURLToPath(new URL('..', import.meta.url))

test('typecheck/example.ts and runners.ts (retry, retryFetch, runTransaction) pass tsc --noEmit --strict', () => {
  const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '-p', 'typecheck/tsconfig.json'], {
    cwd: pkg,
    encoding: 'utf8',
  })
  assert.equal(r.status, 0, r.stdout + r.stderr)
})
