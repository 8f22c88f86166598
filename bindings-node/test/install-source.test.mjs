// `npm install ./bindings-node` from a source checkout leaves a package that loads (issue 25): the
// install script (install.js) builds the addon with cargo when none loads, fails with what to do
// when cargo is missing, and builds nothing when an addon is there; the published package carries
// no install script. Each case installs a copy of this folder (the package's files and its crate's
// Cargo.toml, no `.node`) into a fresh consumer with `npm install --offline`, under a PATH of
// stand-ins: `node`, `sh`, and a `cargo` and `rustc` that record their arguments and "build" by
// copying this folder's addon where real cargo writes it. The last case, run by `make
// test-install-source` only, installs a copy of the workspace and lets real cargo build it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { which } from './binding.mjs'
import { packPublished } from '../scripts/pack.mjs'

const pkg = fileURLToPath(new URL('..', import.meta.url))
const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'))
const ADDON = path.join(pkg, 'retrypolicy.linux-x64-gnu.node')
const skip = (which !== 'native' && 'native package only') ||
  (!(process.platform === 'linux' && process.arch === 'x64' && fs.existsSync(ADDON)) && "needs this folder's linux-x64-gnu build")
// This machine's npm (plain JavaScript), run by this Node, so PATH needs no npm.
const NPM_CLI = path.join(path.dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js')
const TRIPLE = 'x86_64-stand-in-linux-gnu'

/** A temp folder for one case, removed after it. */
function scratch(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-source-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A source checkout's bindings-node under `root`: the package's files and the crate's Cargo.toml, no addon. */
function checkout(root) {
  const dir = path.join(root, 'checkout/bindings-node')
  for (const f of [...manifest.files, 'package.json', 'Cargo.toml']) fs.cpSync(path.join(pkg, f), path.join(dir, f), { recursive: true })
  return dir
}

/** A PATH folder under `root` with `node` and `sh` (npm runs scripts with it), and `tools` ('cargo', 'rustc') as recording stand-ins. */
function toolbox(root, tools) {
  const bin = path.join(root, 'bin')
  fs.mkdirSync(bin)
  fs.symlinkSync(process.execPath, path.join(bin, 'node'))
  fs.symlinkSync('/bin/sh', path.join(bin, 'sh'))
  const stand = (name, body) => {
    const file = path.join(bin, name)
    fs.writeFileSync(file, `#!${process.execPath}\nconst fs = require('node:fs'), path = require('node:path')\n` +
      `fs.appendFileSync(${JSON.stringify(path.join(root, `${name}.log`))}, JSON.stringify({ args: process.argv.slice(2), cwd: process.cwd(), strip: process.env.CARGO_PROFILE_RELEASE_STRIP }) + '\\n')\n${body}\n`)
    fs.chmodSync(file, 0o755)
  }
  if (tools.includes('rustc')) stand('rustc', `console.log('rustc 1.95.0 (stand-in)\\nhost: ${TRIPLE}\\nrelease: 1.95.0')`)
  if (tools.includes('cargo')) {
    // `build`: real cargo's JSON lines (another crate's artifact first), the library copied where cargo writes it.
    stand('cargo', `const args = process.argv.slice(2)
if (args[0] === '--version') { console.log('cargo 1.95.0 (stand-in)'); process.exit(0) }
if (args[0] !== 'build') process.exit(101)
const out = path.join(process.cwd(), '../target', args[args.indexOf('--target') + 1], 'release')
fs.mkdirSync(out, { recursive: true })
fs.copyFileSync(${JSON.stringify(ADDON)}, path.join(out, 'libretrypolicy_node.so'))
const artifact = (name, kind, filenames) => console.log(JSON.stringify({ reason: 'compiler-artifact', target: { name, kind }, filenames }))
artifact('retrypolicy', ['lib'], [path.join(out, 'deps/libretrypolicy-0123.rlib')])
artifact('retrypolicy_node', ['cdylib'], [path.join(out, 'libretrypolicy_node.so')])
console.log(JSON.stringify({ reason: 'build-finished', success: true }))`)
  }
  return bin
}

/** The calls a stand-in recorded. */
const calls = (root, name) =>
  fs.existsSync(path.join(root, `${name}.log`)) ? fs.readFileSync(path.join(root, `${name}.log`), 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : []

/** A fresh consumer under `root` running `npm install --offline <spec>` with `env`: `{dir, status, output}`. */
function install(root, spec, env) {
  const dir = path.join(root, 'consumer')
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name": "consumer", "private": true}')
  const r = spawnSync(process.execPath, [NPM_CLI, 'install', '--offline', '--no-audit', '--no-fund', spec], { cwd: dir, encoding: 'utf8', env })
  return { dir, status: r.status, output: r.stdout + r.stderr }
}

/** `env` with PATH the `bin` folder alone (no cargo, no rustc unless stood in), and `extra`. */
function only(bin, extra = {}) {
  const env = { ...process.env, PATH: bin }
  for (const k of ['CARGO', 'RUSTC', 'RETRYPOLICY_SKIP_BUILD']) delete env[k]
  return { ...env, ...extra }
}

/** Requires the package in `dir`: `{status, stdout, stderr}` of a KV_LOCKED decision. */
const requireIn = (dir) => spawnSync(process.execPath, ['-e', "console.log(require('retrypolicy').decide({service: 'kv', operation: 'get', timeoutMs: 10}, 'KV_LOCKED').delayMs)"],
  { cwd: dir, encoding: 'utf8' })

test('the install script is wired: package.json runs install.js, which builds this folder\'s crate', () => {
  assert.equal(manifest.scripts.install, 'node install.js')
  assert.ok(manifest.files.includes('install.js')) // a plain `npm pack` of the checkout still installs
  // The package the stand-in cargo below is asked to build is this folder's crate.
  assert.equal(JSON.parse(fs.readFileSync(path.join(pkg, 'Cargo.toml'), 'utf8').match(/^name = ("[^"]+")/m)[1]), 'retrypolicy-node')
})

test('the published package runs no install script and carries no crate', { skip: which !== 'native' && 'native package only' }, (t) => {
  const root = scratch(t)
  const record = packPublished(root)
  const files = record.files.map((f) => f.path)
  for (const f of ['install.js', 'Cargo.toml', 'build.rs']) assert.ok(!files.includes(f), `${f} in the tarball`)
  assert.ok(!files.some((f) => f.startsWith('src/')), files.join(' '))
  const packed = JSON.parse(spawnSync('tar', ['xzf', path.join(root, record.filename), '-O', 'package/package.json'], { encoding: 'utf8' }).stdout)
  assert.equal(packed.scripts.install, undefined)
  assert.deepEqual(packed.files, manifest.files.filter((f) => f !== 'install.js'))
  assert.deepEqual({ ...packed, files: undefined, scripts: undefined }, { ...manifest, files: undefined, scripts: undefined })
})

test('source checkout, no addon, cargo on PATH: the install builds it, and the package loads natively', { skip }, (t) => {
  const root = scratch(t)
  const dir = checkout(root)
  const r = install(root, dir, only(toolbox(root, ['cargo', 'rustc'])))
  assert.equal(r.status, 0, r.output)
  const builds = calls(root, 'cargo').filter((c) => c.args[0] === 'build')
  assert.deepEqual(builds.map((c) => [c.args, c.cwd, c.strip]), [[
    ['build', '--release', '--package', 'retrypolicy-node', '--lib', '--message-format=json-render-diagnostics', '--target', TRIPLE],
    fs.realpathSync(dir), 'true',
  ]])
  assert.ok(fs.readFileSync(path.join(dir, 'retrypolicy.linux-x64-gnu.node')).equals(fs.readFileSync(ADDON)))
  const loaded = requireIn(r.dir)
  assert.equal(loaded.stdout.trim(), '1', loaded.stderr)
  assert.equal(loaded.stderr, '', 'the native addon loads: no fallback warning')
})

test('source checkout, no addon, no cargo: the install fails saying what to do; RETRYPOLICY_SKIP_BUILD installs anyway', { skip }, (t) => {
  const root = scratch(t)
  const dir = checkout(root)
  const bin = toolbox(root, [])
  const r = install(root, dir, only(bin))
  assert.notEqual(r.status, 0, r.output)
  assert.match(r.output, /no native addon for linux-x64-gnu loads here \(retrypolicy-linux-x64-gnu is not installed and this source checkout has no build of its own\), and cargo, which builds it, is not on PATH/)
  assert.match(r.output, /Install Rust \(https:\/\/rustup\.rs\), then run this script again \(`npm rebuild retrypolicy`\), or build in place:/)
  assert.match(r.output, /`npm install && npm run build` in .*checkout\/bindings-node, or `make -C bindings-node build`/)
  assert.match(r.output, /set RETRYPOLICY_SKIP_BUILD=1/)

  fs.rmSync(path.join(root, 'consumer'), { recursive: true })
  const skipped = install(root, dir, only(bin, { RETRYPOLICY_SKIP_BUILD: '1' }))
  assert.equal(skipped.status, 0, skipped.output)
  assert.ok(!fs.existsSync(path.join(dir, 'retrypolicy.linux-x64-gnu.node')))
  // Then require's error names the platform package and how to build from source.
  const loaded = requireIn(skipped.dir)
  assert.notEqual(loaded.status, 0)
  assert.match(loaded.stderr, /ERR_RETRYPOLICY_NO_BINDING/)
  assert.match(loaded.stderr, /Get the native addon: npm install retrypolicy-linux-x64-gnu, or build it from source, which needs Rust \(https:\/\/rustup\.rs\)/)
  assert.match(loaded.stderr, /`npm install && npm run build` in .*checkout\/bindings-node, or `make -C bindings-node build` from the checkout's root/)
  assert.doesNotMatch(loaded.stderr, /npm has a bug/)
})

test('source checkout with its own build: the install builds nothing', { skip }, (t) => {
  const root = scratch(t)
  const dir = checkout(root)
  fs.copyFileSync(ADDON, path.join(dir, 'retrypolicy.linux-x64-gnu.node'))
  const r = install(root, dir, only(toolbox(root, ['cargo', 'rustc'])))
  assert.equal(r.status, 0, r.output)
  assert.deepEqual(calls(root, 'cargo'), [])
  assert.equal(requireIn(r.dir).stdout.trim(), '1')
})

test('source checkout, no addon, no cargo, the wasm fallback installed: the install passes, the package runs on wasm', { skip }, (t) => {
  const root = scratch(t)
  const dir = checkout(root)
  // A stand-in for retrypolicy-wasm where the checkout's require finds it.
  const wasm = path.join(dir, 'node_modules/retrypolicy-wasm')
  fs.mkdirSync(wasm, { recursive: true })
  fs.writeFileSync(path.join(wasm, 'package.json'), '{"name": "retrypolicy-wasm", "version": "0.1.0", "main": "index.js"}')
  fs.writeFileSync(path.join(wasm, 'index.js'), "exports.decide = () => ({ delayMs: 'wasm' })")
  const r = install(root, dir, only(toolbox(root, [])))
  assert.equal(r.status, 0, r.output)
  const loaded = requireIn(r.dir)
  assert.equal(loaded.stdout.trim(), 'wasm', loaded.stderr)
  assert.match(loaded.stderr, /retrypolicy-linux-x64-gnu is not installed or did not load\): using the WebAssembly build/)
})

// `make test-install-source`: RETRYPOLICY_TEST_CARGO_BUILD names cargo's target folder for it, kept
// between runs. Not in `make test`: napi's target folder cannot be shared (napi sets the build
// script's NAPI_TYPE_DEF_TMP_FOLDER, so each switch rebuilds the crate), and in its own folder any
// change to core, wire or the binding rebuilds and links the addon again (45 s to 2 min here).
const CARGO_TARGET = process.env.RETRYPOLICY_TEST_CARGO_BUILD
test('real cargo: a copy of the checkout installed into a fresh folder builds its addon, which loads', {
  skip: skip || (!CARGO_TARGET && 'set RETRYPOLICY_TEST_CARGO_BUILD (make test-install-source)'),
}, (t) => {
  const root = scratch(t)
  const repo = path.join(pkg, '..')
  const copy = path.join(root, 'checkout')
  // The workspace as it is (sources being edited included), less what builds and installs leave.
  const left = new Set(['node_modules', 'target', 'build', 'pkg', 'dist', '.venv', '__pycache__'])
  const filter = (f) => !left.has(path.basename(f)) && !/\.(node|so)$/.test(f)
  for (const f of ['Cargo.toml', 'Cargo.lock', ...members(repo)]) fs.cpSync(path.join(repo, f), path.join(copy, f), { recursive: true, filter, preserveTimestamps: true })
  const dir = path.join(copy, 'bindings-node')
  assert.ok(!fs.existsSync(path.join(dir, 'retrypolicy.linux-x64-gnu.node')))
  const env = { ...process.env, CARGO_TARGET_DIR: path.resolve(CARGO_TARGET) }
  delete env.RETRYPOLICY_SKIP_BUILD
  const started = performance.now()
  const r = install(root, dir, env)
  t.diagnostic(`npm install with the build: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  assert.equal(r.status, 0, r.output)
  const loaded = requireIn(r.dir)
  assert.equal(loaded.stdout.trim(), '1', loaded.stderr)
  assert.equal(loaded.stderr, '')
})

/** The workspace's members, from its Cargo.toml. */
function members(repo) {
  const toml = fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8')
  return JSON.parse(toml.match(/^members = (\[[^\]]*\])/m)[1])
}
