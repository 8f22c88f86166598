'use strict'
// Which build this package runs on. The native addon when it loads: `../index.js`, napi's
// generated loader, finds this folder's `.node` (a build from source: `npm run build`, or the
// install script ../install.js in a source checkout) or the platform package npm installed from
// `optionalDependencies` (`retrypolicy-linux-x64-gnu`, ...). When none loads, the WebAssembly
// build with the same API (the optional dependency `retrypolicy-wasm`), with one warning naming
// the platform package that is missing. When neither loads, an error naming the platform package
// and how to build the addon from source. The loader's own error, which sends users to npm's "bug
// related to optional dependencies", is never shown: only its causes are kept.

const path = require('node:path')
const fs = require('node:fs')

/** Whether this Linux runs glibc (else musl), as napi's loader tells them apart. */
function glibc() {
  if (!process.report || typeof process.report.getReport !== 'function') return true
  process.report.excludeNetwork = true
  return Boolean(process.report.getReport().header.glibcVersionRuntime)
}

/** napi's name for this machine, e.g. `linux-arm64-musl`: its platform package's suffix and its `.node` file's. */
function platformName() {
  const { platform, arch } = process
  const abi = platform === 'linux' ? (glibc() ? '-gnu' : '-musl') : platform === 'win32' ? '-msvc' : ''
  return `${platform}-${arch}${abi}`
}

/** The platform package napi's loader looks for on this machine, e.g. `retrypolicy-linux-arm64-musl`. */
function platformPackage() {
  return `retrypolicy-${platformName()}`
}

/** This package's folder when it is a source checkout (its crate's Cargo.toml beside it), else null. */
function sourceCheckout() {
  const dir = path.join(__dirname, '..')
  return fs.existsSync(path.join(dir, 'Cargo.toml')) ? dir : null
}

/** How to build the addon from source: in this folder when it is a source checkout, else in a checkout's. */
function buildFromSource() {
  const source = sourceCheckout()
  const where = source === null ? 'in bindings-node of a retrypolicy checkout' : `in ${source}`
  return `\`npm install && npm run build\` ${where}, or \`make -C bindings-node build\` from the checkout's root`
}

/** `{native}`: the addon; or `{wasm}`: the wasm build's API, after its one warning. Throws when neither loads. */
function load() {
  let nativeError
  try {
    return { native: require('../index.js') }
  } catch (e) {
    nativeError = e
  }
  const missing = platformPackage()
  let wasm
  try {
    // The package's ES module (its `node` export); require() of an ES module needs Node >= 20.19.
    wasm = require('retrypolicy-wasm')
  } catch (wasmError) {
    const why = wasmError.code === 'MODULE_NOT_FOUND' ? 'not installed' : wasmError.message.split('\n')[0]
    const e = new Error(
      `retrypolicy: no native binding loaded (the platform package ${missing} is not installed or did not load) ` +
        `and the WebAssembly fallback retrypolicy-wasm did not load either (${why}). ` +
        `Get the native addon: npm install ${missing}, or build it from source, which needs Rust (https://rustup.rs): ` +
        `${buildFromSource()}. Or npm install retrypolicy-wasm (Node >= 20.19).`,
    )
    e.code = 'ERR_RETRYPOLICY_NO_BINDING'
    e.cause = [nativeError.cause ?? nativeError, wasmError]
    throw e
  }
  const warning = new Error(
    `no native binding for ${process.platform}-${process.arch} loaded (${missing} is not installed or did not load): ` +
      'using the WebAssembly build (retrypolicy-wasm), same API and answers, slower calls',
  )
  warning.name = 'RetryPolicyWarning'
  warning.code = 'RETRYPOLICY_WASM_FALLBACK'
  warning.cause = nativeError.cause ?? nativeError
  process.emitWarning(warning)
  return { wasm }
}

module.exports = { load, platformName, platformPackage, sourceCheckout, buildFromSource }
