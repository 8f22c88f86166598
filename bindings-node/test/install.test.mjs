// A fresh directory installs the packed tarballs (the main package as released, scripts/pack.mjs,
// and the linux-x64-gnu platform package around this folder's own build of the addon), requires
// and imports the package, and runs the quickstart and the realistic example
// (examples/node/flaky-counter.mjs) against it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { which } from './binding.mjs'
import { sh, pack, freshInstall, writeQuickstart, QUICKSTART_OUTPUT } from './packing.mjs'
import { packPublished } from '../scripts/pack.mjs'

const pkg = fileURLToPath(new URL('..', import.meta.url))
const onLinuxX64 = process.platform === 'linux' && process.arch === 'x64' && fs.existsSync(path.join(pkg, 'retrypolicy.linux-x64-gnu.node'))

test('npm pack → npm install --offline in a fresh folder → require, import, quickstart, example', { skip: (which !== 'native' && 'native package only') || (!onLinuxX64 && 'needs this folder\'s linux-x64-gnu build') }, () => {
  const packs = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-packs-'))
  let dir
  try {
    const main = packPublished(packs)
    const files = main.files.map((f) => f.path)
    for (const f of ['lib/retrypolicy.js', 'lib/binding.js', 'lib/retrypolicy.d.ts', 'lib/mongodb.d.ts', 'lib/http.d.ts', 'lib/retry-runners.d.ts', 'lib/budget.d.ts', 'lib/budget.js', 'lib/grpc.d.ts', 'lib/grpc.js', 'lib/aws.d.ts', 'lib/aws.js', 'index.js', 'index.d.ts', 'README.md']) {
      assert.ok(files.includes(f), `${f} missing from the tarball: ${files}`)
    }
    assert.ok(!files.some((f) => f.endsWith('.node')), `the main package ships no addon (the platform packages do): ${files}`)
    // The platform package around this folder's build (make npm-packs builds the portable one).
    const platform = path.join(packs, 'linux-x64-gnu')
    fs.cpSync(path.join(pkg, 'npm/linux-x64-gnu/package.json'), path.join(platform, 'package.json'))
    fs.copyFileSync(path.join(pkg, 'retrypolicy.linux-x64-gnu.node'), path.join(platform, 'retrypolicy.linux-x64-gnu.node'))
    const addon = pack(platform, packs)
    dir = freshInstall([path.join(packs, main.filename), path.join(packs, addon.filename)])
    const cjs = sh(process.execPath, ['-e', "const rp = require('retrypolicy'); console.log(rp.decide({service: 'kv', operation: 'get', timeoutMs: 10}, 'KV_LOCKED').delayMs)"], dir)
    assert.equal(cjs.stdout.trim(), '1')
    assert.equal(cjs.stderr, '', 'the native addon loads: no fallback warning')
    const esm = sh(process.execPath, ['--input-type=module', '-e', "import { version, RetryReason } from 'retrypolicy'; console.log(version, RetryReason.KV_LOCKED)"], dir).stdout
    assert.match(esm, /^\d+\.\d+\.\d+ KV_LOCKED$/m)
    assert.match(sh(process.execPath, [writeQuickstart(path.join(pkg, 'README.md'), dir)], dir).stdout, QUICKSTART_OUTPUT)
    const example = fileURLToPath(new URL('../../examples/node/flaky-counter.mjs', import.meta.url))
    fs.copyFileSync(example, path.join(dir, 'flaky-counter.mjs'))
    const r = spawnSync(process.execPath, ['flaky-counter.mjs'], { cwd: dir, encoding: 'utf8', env: { ...process.env, RETRYPOLICY_PACKAGE: 'retrypolicy' } })
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /counter = 7, pending = \[\]: exact/)
    // @opentelemetry/api, an optional peer, is not installed: the package loads and runs (a breaker's
    // change and a retry included), and otel.instrument() says how to get it
    assert.equal(fs.existsSync(path.join(dir, 'node_modules/@opentelemetry')), false)
    const noOtel = sh(process.execPath, ['-e', `const rp = require('retrypolicy')
      let now = 0, calls = 0
      const breaker = new rp.CircuitBreaker({ volume_threshold: 1, sleep_window_ms: 0 })
      rp.retry(async () => { if (++calls === 1) throw new Error('busy'); return calls }, { operation: { service: 'kv', operation: 'get' },
        timeoutMs: 1000, classify: () => 'KV_TEMPORARY_FAILURE', breaker, clock: () => now, sleep: async (ms) => { now += ms } })
        .then((r) => { try { rp.otel.instrument() } catch (e) { console.log(r, breaker.state(now), e.code) } })`], dir)
    assert.equal(noOtel.stdout.trim(), '2 closed ERR_RETRYPOLICY_NO_OPENTELEMETRY')
  } finally {
    fs.rmSync(packs, { recursive: true, force: true })
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  }
})
