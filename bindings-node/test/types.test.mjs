// The type definitions compile under `tsc --noEmit --strict`, including the lines that must not;
// and the README's examples, as a TypeScript user's editor checks them (checkJs, strict).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const pkg = fileURLToPath(new URL('..', import.meta.url))
const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))

/** Runs tsc with `args` in this package; asserts it passes. */
function typecheck(args) {
  const r = spawnSync(process.execPath, [tsc, ...args], { cwd: pkg, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stdout + r.stderr)
}

test('typecheck/example.ts and runners.ts (retry, retryFetch, runTransaction) pass tsc --noEmit --strict', () => {
  typecheck(['--noEmit', '--strict', '-p', 'typecheck/tsconfig.json'])
})

test("the README's examples pass tsc --strict --checkJs as written (the hooks' steps typed, d.delayMs included)", (t) => {
  const readme = fs.readFileSync(path.join(pkg, 'README.md'), 'utf8')
  const blocks = [...readme.matchAll(/```js\n([^]*?)```/g)].map((m) => m[1]).filter((b) => /from 'retrypolicy'/.test(b))
  assert.ok(blocks.length >= 4, `${blocks.length} examples`)
  assert.ok(blocks.some((b) => /onRetry: \(step, err\) => .*step\.delayMs/.test(b)), 'the wrap-a-call example reads the wait step')
  // Inside the package, so that `import 'retrypolicy'` resolves to these declarations.
  fs.mkdirSync(path.join(pkg, 'build'), { recursive: true })
  const dir = fs.mkdtempSync(path.join(pkg, 'build/readme-types-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const files = blocks.map((b, i) => {
    fs.writeFileSync(path.join(dir, `example${i}.mjs`), b)
    return `example${i}.mjs`
  })
  const compilerOptions = { strict: true, noEmit: true, allowJs: true, checkJs: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', types: ['node'] }
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files }))
  typecheck(['-p', path.join(dir, 'tsconfig.json')])
})
