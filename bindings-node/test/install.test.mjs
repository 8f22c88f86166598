// A fresh directory installs the packed tarball, requires and imports it, and runs the quickstart
// and the realistic example (examples/node/flaky-counter.mjs) against the installed package.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { which } from './binding.mjs'

const pkg = fileURLToPath(new URL('..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

function sh(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' })
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r.stdout
}

test('npm pack → npm install in a fresh folder → require, import, quickstart, example', { skip: which !== 'native' && 'native package only' }, () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-install-'))
  try {
    const packed = JSON.parse(sh(npm, ['pack', '--json', '--pack-destination', dir], pkg))
    const files = packed[0].files.map((f) => f.path)
    for (const f of ['lib/retrypolicy.js', 'lib/retrypolicy.d.ts', 'lib/mongodb.d.ts', 'lib/http.d.ts', 'lib/retry-runners.d.ts', 'lib/budget.d.ts', 'lib/budget.js', 'index.js', 'index.d.ts', 'README.md']) {
      assert.ok(files.includes(f), `${f} missing from the tarball: ${files}`)
    }
    assert.ok(files.some((f) => f.endsWith('.node')), 'no native addon in the tarball')
    fs.writeFileSync(path.join(dir, 'package.json'), '{"name": "consumer", "private": true}')
    sh(npm, ['install', '--no-audit', '--no-fund', '--offline', path.join(dir, packed[0].filename)], dir)
    const cjs = sh(process.execPath, ['-e', "const rp = require('retrypolicy'); console.log(rp.decide({service: 'kv', operation: 'get', timeoutMs: 10}, 'KV_LOCKED').delayMs)"], dir)
    assert.equal(cjs.trim(), '1')
    const esm = sh(process.execPath, ['--input-type=module', '-e', "import { version, RetryReason } from 'retrypolicy'; console.log(version, RetryReason.KV_LOCKED)"], dir)
    assert.match(esm, /^\d+\.\d+\.\d+ KV_LOCKED$/m)
    const readme = fs.readFileSync(path.join(pkg, 'README.md'), 'utf8')
    const quickstart = readme.split('## Quickstart')[1].match(/```js\n([^]*?)```/)[1]
    fs.writeFileSync(path.join(dir, 'quickstart.mjs'), quickstart)
    assert.match(sh(process.execPath, ['quickstart.mjs'], dir), /^retry 8 after 500 ms/m)
    const example = fileURLToPath(new URL('../../examples/node/flaky-counter.mjs', import.meta.url))
    fs.copyFileSync(example, path.join(dir, 'flaky-counter.mjs'))
    const r = spawnSync(process.execPath, ['flaky-counter.mjs'], { cwd: dir, encoding: 'utf8', env: { ...process.env, RETRYPOLICY_PACKAGE: 'retrypolicy' } })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /counter = 7, pending = \[\]: exact/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
