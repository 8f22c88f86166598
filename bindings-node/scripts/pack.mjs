// `npm pack` of the published package: package.json's `files` and manifest, less the source
// checkout's install script (install.js builds the addon from this folder's crate, which the
// tarball does not carry; the release's addons are in the platform packages), so installing the
// release runs no script. `node scripts/pack.mjs DEST` writes the tarball to DEST and prints npm's
// record of it (JSON: filename, files, sizes).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const pkg = fileURLToPath(new URL('..', import.meta.url))
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** Packs the published package into `dest`; returns npm's record of the tarball. */
export function packPublished(dest) {
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'))
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-stage-'))
  try {
    manifest.files = manifest.files.filter((f) => f !== 'install.js')
    delete manifest.scripts.install
    for (const f of manifest.files) fs.cpSync(path.join(pkg, f), path.join(stage, f), { recursive: true })
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    const r = spawnSync(npm, ['pack', '--json', '--pack-destination', path.resolve(dest)], { cwd: stage, encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`npm pack exited ${r.status}\n${r.stdout}\n${r.stderr}`)
    return JSON.parse(r.stdout)[0]
  } finally {
    fs.rmSync(stage, { recursive: true, force: true })
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.length !== 3) throw new Error('usage: node scripts/pack.mjs DEST')
  fs.mkdirSync(process.argv[2], { recursive: true })
  console.log(JSON.stringify(packPublished(process.argv[2]), null, 2))
}
