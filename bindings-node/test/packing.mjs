// Helpers for the install tests: npm pack, an offline install of tarballs into a fresh folder (no
// registry), and the README's quickstart as a user's file there.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'

export const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** Runs `cmd args` in `cwd`; asserts it exits 0; returns `{stdout, stderr}`. */
export function sh(cmd, args, cwd, env = process.env) {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env })
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} exited ${r.status}\n${r.stdout}\n${r.stderr}`)
  return r
}

/** `npm pack` of the package folder `dir` into `dest`: npm's record of it (`filename`, `files`, sizes). */
export function pack(dir, dest) {
  return JSON.parse(sh(npm, ['pack', '--json', '--pack-destination', dest], dir).stdout)[0]
}

/** A fresh folder with the tarballs installed from themselves alone (`npm install --offline`) by `npmCommand`. */
export function freshInstall(tarballs, npmCommand = [npm]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retrypolicy-install-'))
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name": "consumer", "private": true}')
  const [cmd, ...args] = npmCommand
  sh(cmd, [...args, 'install', '--offline', '--no-audit', '--no-fund', ...tarballs], dir)
  return dir
}

/** Writes the README's Quickstart block into `dir` as quickstart.mjs; returns its path. */
export function writeQuickstart(readmePath, dir) {
  const readme = fs.readFileSync(readmePath, 'utf8')
  const quickstart = readme.split('## Quickstart')[1].match(/```js\n([^]*?)```/)[1]
  const file = path.join(dir, 'quickstart.mjs')
  fs.writeFileSync(file, quickstart)
  return file
}

/** What the quickstart prints first: the decision's log line, as the README shows it. */
export const QUICKSTART_OUTPUT = /^retry 8 after 500 ms, capped to the timeout, then cancel/m
