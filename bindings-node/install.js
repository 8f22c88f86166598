'use strict'
// The install script of a source checkout (`npm install ./bindings-node`): it leaves a package that
// loads. When no native addon loads (neither this folder's `.node` nor the platform package), it
// builds one from this folder's crate with cargo and puts it where napi's loader looks
// (`retrypolicy.<platform>.node`). Without cargo it fails the install with what to do, unless the
// wasm fallback is installed (the package then loads on it) or RETRYPOLICY_SKIP_BUILD is set.
// The published package carries neither this file nor the script (scripts/pack.mjs): its addons
// come in the platform packages, and installing it runs nothing.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { platformName, platformPackage, sourceCheckout, buildFromSource } = require('./lib/binding.js')

const say = (line) => process.stderr.write(`retrypolicy: ${line}\n`)

/** The load error of the native addon (this folder's build or the platform package), or null when it loads. */
function nativeLoadError() {
  try {
    require('./index.js')
    return null
  } catch (e) {
    return e
  }
}

/** Whether the wasm fallback resolves from here. */
function wasmInstalled() {
  try {
    require.resolve('retrypolicy-wasm')
    return true
  } catch {
    return false
  }
}

/** Runs `cmd args` quietly: `{status, stdout}`, or `{error}` when it cannot be started (not on PATH). */
function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 << 20, ...options })
  return r.error ? { error: r.error } : { status: r.status, stdout: r.stdout }
}

/** rustc's host triple (napi builds for it with `--target`, so this build shares its target folder), or null. */
function hostTriple() {
  const r = run(process.env.RUSTC || 'rustc', ['-vV'])
  return r.status === 0 ? (r.stdout.match(/^host: (\S+)$/m)?.[1] ?? null) : null
}

/** Builds the crate in `dir` with `cargo`; returns the path of the shared library cargo wrote. */
function build(cargo, dir) {
  const triple = hostTriple()
  const args = ['build', '--release', '--package', 'retrypolicy-node', '--lib', '--message-format=json-render-diagnostics']
  if (triple !== null) args.push('--target', triple)
  say(`no native addon loads here: building it from source (cargo ${args.join(' ')})`)
  // As `make build`: the release profile strips the library (napi build's --strip does not).
  const env = { CARGO_PROFILE_RELEASE_STRIP: 'true', ...process.env }
  const r = run(cargo, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] })
  if (r.status !== 0) throw new Error(`cargo build failed (exit ${r.status ?? r.error?.message}): see its output above`)
  const artifacts = r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  const lib = artifacts.find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'retrypolicy_node' && m.target.kind.includes('cdylib'))
  const file = lib?.filenames.find((f) => /\.(so|dylib|dll)$/.test(f))
  if (file === undefined) throw new Error('cargo build named no retrypolicy_node library among its artifacts')
  return file
}

function main() {
  if (process.env.RETRYPOLICY_SKIP_BUILD) return say('RETRYPOLICY_SKIP_BUILD is set: the native addon is not built')
  const loadError = nativeLoadError()
  if (loadError === null) return // this folder's build or the platform package loads: nothing to do
  const dir = sourceCheckout()
  if (dir === null) return // not a source checkout: nothing to build here (lib/binding.js says what to do)
  const cargo = process.env.CARGO || 'cargo'
  if (run(cargo, ['--version']).status !== 0) {
    const missing = `no native addon for ${platformName()} loads here (${platformPackage()} is not installed and this source checkout has no build of its own), and cargo, which builds it, is not on PATH`
    if (wasmInstalled()) return say(`${missing}: the package runs on the WebAssembly fallback retrypolicy-wasm`)
    say(`${missing}.`)
    say(`Install Rust (https://rustup.rs), then run this script again (\`npm rebuild retrypolicy\`), or build in place: ${buildFromSource()}.`)
    say('To install without the addon anyway, set RETRYPOLICY_SKIP_BUILD=1 (require(\'retrypolicy\') then throws ERR_RETRYPOLICY_NO_BINDING until it is built).')
    process.exitCode = 1
    return
  }
  const built = build(cargo, dir)
  const target = path.join(dir, `retrypolicy.${platformName()}.node`)
  const partial = `${target}.${process.pid}.tmp`
  fs.copyFileSync(built, partial)
  fs.renameSync(partial, target)
  const stillFailing = nativeLoadError()
  if (stillFailing !== null) throw new Error(`the addon built from source (${target}) does not load: ${stillFailing.message}`)
  say(`built the native addon from source: ${target}`)
}

try {
  main()
} catch (e) {
  say(e.message)
  process.exitCode = 1
}
