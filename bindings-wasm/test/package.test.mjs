// The publishable package on its own: `npm pack`, installed offline from the tarball into a fresh
// folder, then the README's quickstart run there by Node (the `node` export, index.mjs), and a
// page importing the installed package's ES module (the `browser` export, through an import map
// built from the installed package.json) making a decision and running `retry` in Chromium, served on 127.0.0.1.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { serve } from '../scripts/serve.mjs'

const PKG = fileURLToPath(new URL('..', import.meta.url))
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']

function sh (cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' })
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r
}

test('npm pack → npm install --offline in a fresh folder → Node runs the quickstart, a page makes a decision', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'retrypolicy-wasm-install-'))
  let context, server
  try {
    const [packed] = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', dir], PKG).stdout)
    const files = packed.files.map((f) => f.path)
    for (const f of ['index.mjs', 'backend.mjs', 'browser.mjs', 'browser.d.ts', 'pkg/web/runners.mjs', 'pkg/index.d.ts', 'pkg/retrypolicy.d.ts', 'pkg/web/retrypolicy_wasm.js', 'pkg/web/retrypolicy_wasm.d.ts',
      'pkg/web/retrypolicy_wasm_bg.wasm', 'pkg/runners/retry.js', 'README.md', 'LICENSE-MIT', 'LICENSE-APACHE',
      'pkg-http/index.mjs', 'pkg-http/browser.mjs', 'pkg-http/web/retrypolicy_wasm.js', 'pkg-http/web/retrypolicy_wasm_bg.wasm']) {
      assert.ok(files.includes(f), `${f} missing from the tarball: ${files}`)
    }
    // The full module and the HTTP module, once each.
    assert.deepEqual(files.filter((f) => f.endsWith('.wasm')).sort(), ['pkg-http/web/retrypolicy_wasm_bg.wasm', 'pkg/web/retrypolicy_wasm_bg.wasm'])
    writeFileSync(join(dir, 'package.json'), '{"name": "consumer", "private": true}')
    sh('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, packed.filename)], dir)
    const manifest = JSON.parse(readFileSync(join(dir, 'node_modules/retrypolicy-wasm/package.json'), 'utf8'))
    assert.equal(manifest.private, undefined)
    assert.equal(manifest.sideEffects, false)

    // Node: the README's quickstart as a user would write it, importing the package by name.
    const readme = readFileSync(join(PKG, 'README.md'), 'utf8')
    const quickstart = readme.match(/## Quickstart[^]*?```js\n([^]*?)```/)[1]
    assert.match(quickstart, /from 'retrypolicy-wasm'/)
    writeFileSync(join(dir, 'quickstart.mjs'), quickstart)
    const out = sh(process.execPath, ['quickstart.mjs'], dir).stdout
    assert.match(out, /^retry 8 after 500 ms, capped to the timeout, then cancel \(reason KV_NOT_MY_VBUCKET/m)
    // The `./http` export by name: the HTTP rules, and a left-out function's typed error.
    writeFileSync(join(dir, 'http.mjs'), `import { http, classifyKv } from 'retrypolicy-wasm/http'
console.log(http.classify(503).rule)
try { classifyKv('get', 0) } catch (e) { console.log(e.code, e.field) }
`)
    assert.equal(sh(process.execPath, ['http.mjs'], dir).stdout, 'service_unavailable\nunknown_name function\n')

    // Chromium: the `browser` export of the installed package, mapped as a bundler would resolve it.
    const browserEntry = manifest.exports['.'].browser.default
    const importMap = { imports: { 'retrypolicy-wasm': `/node_modules/retrypolicy-wasm/${browserEntry.replace(/^\.\//, '')}` } }
    writeFileSync(join(dir, 'index.html'), `<!doctype html><meta charset="utf-8">
<script type="importmap">${JSON.stringify(importMap)}</script>
<script type="module">
import { Policy, decide, retry } from 'retrypolicy-wasm'
const d = decide({ service: 'kv', operation: 'get', timeoutMs: 2500 }, 'KV_LOCKED', new Policy({ jitter: 'none' }))
document.body.dataset.retried = await retry(({ attempt }) => { if (attempt === 1) throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }); return attempt }, { operation: { service: 'search' }, timeoutMs: 1000 })
document.body.dataset.decision = JSON.stringify(d)
</script>`)
    server = await serve(0, dir)
    context = await chromium.launchPersistentContext(join(dir, 'profile'), { executablePath: '/usr/bin/chromium', headless: true, args: FLAGS })
    const page = await context.newPage()
    const errors = []
    page.on('pageerror', (e) => errors.push(e.message))
    await page.goto(`${server.url}/index.html`)
    await page.waitForSelector('body[data-decision]', { state: 'attached', timeout: 15000 }).catch((e) => assert.fail(`${e.message}: ${errors}`))
    const decision = JSON.parse(await page.locator('body').getAttribute('data-decision'))
    // RFC 0049 best effort, first retry of a KV get after KV_LOCKED, no jitter: 1 ms.
    assert.deepEqual([decision.action, decision.delayMs, decision.rule], ['retry', 1, 'best_effort_backoff'])
    // The README's `import { retry } from 'retrypolicy-wasm'` in a page: a refused first attempt, then attempt 2's value.
    assert.equal(await page.locator('body').getAttribute('data-retried'), '2')
    assert.deepEqual(errors, [])
  } finally {
    await context?.close()
    await server?.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
