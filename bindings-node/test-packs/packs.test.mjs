// The release tarballs (`make npm-packs` puts them in $DIST), each installed offline into a fresh
// folder as a user's npm would install them, then the README's quickstart run there: natively on
// x64, on arm64 under qemu (the official Node arm64 build, $NODE_ARM64), and with no platform
// package, where the wasm build answers after one warning. The musl addons cannot run here (no
// musl Node): musl's loader checks that only Node's own `napi_*` symbols are left unresolved.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { sh, freshInstall, writeQuickstart, QUICKSTART_OUTPUT } from '../test/packing.mjs'

const here = fileURLToPath(new URL('..', import.meta.url))
const DIST = path.resolve(process.env.DIST ?? path.join(here, '../dist'))
const NODE_ARM64 = process.env.NODE_ARM64 ?? path.join(here, '../target/node-arm64/package/bin/node')
const QEMU_ARM64 = ['qemu-aarch64-static', '-L', '/', NODE_ARM64]
// This machine's npm (plain JavaScript), run by the arm64 Node as an arm64 user's npm would run.
const NPM_CLI = path.join(path.dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js')
const README = path.join(here, 'README.md')
const { version } = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'))
const tarball = (name) => path.join(DIST, `${name}-${version}.tgz`)
const MAIN = [tarball('retrypolicy'), tarball('retrypolicy-wasm')]
const WARNING = /RetryPolicyWarning: no native binding for linux-x64 loaded \(retrypolicy-linux-x64-gnu is not installed or did not load\): using the WebAssembly build/g

/** Runs the quickstart in `dir` with `node` (a command line), returning what it printed. */
function quickstart(dir, node) {
  const file = writeQuickstart(README, dir)
  return sh(node[0], [...node.slice(1), file], dir)
}

function inFresh(tarballs, npmCommand, body) {
  const dir = freshInstall(tarballs, npmCommand)
  try {
    body(dir)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('every package built here is in dist/, the main one without an addon', () => {
  for (const p of ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl']) {
    const listing = sh('tar', ['tzf', tarball(`retrypolicy-${p}`)], DIST).stdout
    assert.match(listing, new RegExp(`^package/retrypolicy\\.${p}\\.node$`, 'm'))
  }
  assert.doesNotMatch(sh('tar', ['tzf', tarball('retrypolicy')], DIST).stdout, /\.node$/m)
  assert.match(sh('tar', ['tzf', tarball('retrypolicy-wasm')], DIST).stdout, /^package\/pkg\/web\/retrypolicy_wasm_bg\.wasm$/m)
})

test('x64: the native addon from retrypolicy-linux-x64-gnu, no warning', () => {
  inFresh([...MAIN, tarball('retrypolicy-linux-x64-gnu')], undefined, (dir) => {
    const r = quickstart(dir, [process.execPath])
    assert.match(r.stdout, QUICKSTART_OUTPUT)
    assert.equal(r.stderr, '')
    // The glibc build asks for nothing newer than glibc 2.17 (the `.2.17` target).
    const addon = path.join(dir, 'node_modules/retrypolicy-linux-x64-gnu/retrypolicy.linux-x64-gnu.node')
    const versions = [...sh('objdump', ['-T', addon], dir).stdout.matchAll(/GLIBC_2\.(\d+)/g)].map((m) => Number(m[1]))
    assert.ok(Math.max(...versions) <= 17, `needs GLIBC_2.${Math.max(...versions)}`)
  })
})

test('arm64 under qemu: npm and Node on arm64, the native addon from retrypolicy-linux-arm64-gnu', { skip: !fs.existsSync(NODE_ARM64) && `no ${NODE_ARM64}` }, () => {
  inFresh([...MAIN, tarball('retrypolicy-linux-arm64-gnu')], [...QEMU_ARM64, NPM_CLI], (dir) => {
    const r = quickstart(dir, QEMU_ARM64)
    assert.match(r.stdout, QUICKSTART_OUTPUT)
    assert.equal(r.stderr, '')
    const [cmd, ...args] = QEMU_ARM64
    const arch = sh(cmd, [...args, '-p', "process.arch + ' ' + require.resolve('retrypolicy-linux-arm64-gnu')"], dir).stdout
    assert.match(arch, /^arm64 .*retrypolicy\.linux-arm64-gnu\.node$/m)
  })
})

test('no platform package: the wasm build answers, after one warning naming the package', () => {
  inFresh(MAIN, undefined, (dir) => {
    const r = quickstart(dir, [process.execPath])
    assert.match(r.stdout, QUICKSTART_OUTPUT)
    assert.equal([...r.stderr.matchAll(WARNING)].length, 1, r.stderr)
    assert.doesNotMatch(r.stderr, /npm has a bug/)
    // Required many times, from CommonJS and ESM, it still says so once.
    const twice = sh(process.execPath, ['--input-type=module', '-e',
      "import { createRequire } from 'node:module'; import { decide } from 'retrypolicy'; const rp = createRequire(process.cwd() + '/')('retrypolicy'); console.log(decide === rp.decide, rp.decide({ service: 'kv', operation: 'get', timeoutMs: 10 }, 'KV_LOCKED').delayMs)"], dir)
    assert.equal(twice.stdout.trim(), 'true 1')
    assert.equal([...twice.stderr.matchAll(WARNING)].length, 1, twice.stderr)
  })
})

test('neither a platform package nor the wasm one: our error, never npm\'s message', () => {
  inFresh([tarball('retrypolicy')], undefined, (dir) => {
    const r = spawnSync(process.execPath, ['-e', "require('retrypolicy')"], { cwd: dir, encoding: 'utf8' })
    assert.notEqual(r.status, 0)
    assert.match(r.stderr, /ERR_RETRYPOLICY_NO_BINDING|no native binding loaded \(the platform package retrypolicy-linux-x64-gnu is not installed/)
    assert.match(r.stderr, /npm install retrypolicy-linux-x64-gnu/)
    assert.doesNotMatch(r.stderr, /npm has a bug/)
  })
})

test('musl addons: only napi_* symbols left for Node to supply', () => {
  const dir = fs.mkdtempSync(path.join(DIST, '.musl-'))
  try {
    for (const arch of ['x64', 'arm64']) {
      fs.mkdirSync(path.join(dir, arch))
      sh('tar', ['xzf', tarball(`retrypolicy-linux-${arch}-musl`), '-C', path.join(dir, arch)], dir)
    }
    // x64: musl's own loader resolves the addon's libc.so to itself and names what is left.
    const r = spawnSync('/lib/ld-musl-x86_64.so.1', ['--list', path.join(dir, 'x64/package/retrypolicy.linux-x64-musl.node')], { encoding: 'utf8' })
    const missing = [...r.stderr.matchAll(/Error relocating [^:]+: (\w+): symbol not found/g)].map((m) => m[1])
    assert.ok(missing.length > 0, r.stdout + r.stderr)
    assert.deepEqual(missing.filter((s) => !s.startsWith('napi_')), [], r.stderr)
    // arm64 (no arm64 musl loader here): an AArch64 shared object needing only libc.so.
    const elf = sh('readelf', ['-hd', path.join(dir, 'arm64/package/retrypolicy.linux-arm64-musl.node')], dir).stdout
    assert.match(elf, /Machine:\s+AArch64/)
    assert.deepEqual([...elf.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]), ['libc.so'])
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
