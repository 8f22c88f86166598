// End to end: the explorer served on 127.0.0.1, driven in Debian's Chromium by playwright-core.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { serve } from '../scripts/serve.mjs'

const BUILD = fileURLToPath(new URL('../build/', import.meta.url))
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync']
let server, context, page, profileDir

before(async () => {
  mkdirSync(BUILD, { recursive: true })
  server = await serve(0)
  profileDir = mkdtempSync(join(tmpdir(), 'rp-chromium-'))
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium', headless: true, args: FLAGS, viewport: { width: 1280, height: 800 }
  })
  page = await context.newPage()
  const errors = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.errors = errors
})

after(async () => {
  await context?.close()
  await server?.close()
  if (profileDir) rmSync(profileDir, { recursive: true, force: true })
})

async function open (hash) {
  await page.goto(`${server.url}/demo/index.html#${hash}`)
  await page.waitForSelector('body[data-ready="1"]')
}

const text = (sel) => page.locator(sel).textContent()

test('a KV upsert whose socket closed in flight is not retried, a get is', async () => {
  await open('profile=couchbase&service=kv&operation=upsert&failure=reason&reason=SOCKET_CLOSED_WHILE_IN_FLIGHT&timeout=2500')
  assert.equal(await text('#action'), 'no retry')
  assert.match(await text('#sentence'), /KV upsert is not idempotent/)
  assert.equal(await text('#rule'), 'best_effort_not_idempotent')
  assert.equal(await text('#section'), 'RFC 0049, Best Effort')
  await page.selectOption('select[name=operation]', 'get')
  assert.equal(await text('#action'), 'retry')
  assert.match(await text('#delay'), /^after 1 ms/)
  assert.match(page.url(), /operation=get/)
})

test('the schedule draws one bar per attempt and says how it ended', async () => {
  await open('profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED&timeout=2500&pattern=temporary&latency=2')
  // 1, 2, 4 ... 256, then 500 ms three times; the 13th wait is cut at the 2.5 s timeout.
  assert.equal(await page.locator('#timeline').getAttribute('data-attempts'), '13')
  assert.equal(await page.locator('#timeline rect.attempt').count(), 13)
  assert.match(await text('#ending'), /^timed out after 13 attempts: 2500 ms in all/)
  await page.selectOption('select[name=pattern]', 'closed-once')
  assert.equal(await page.locator('#timeline rect.attempt').count(), 2)
  assert.match(await text('#ending'), /^succeeded after 2 attempts/)
  await page.selectOption('select[name=pattern]', 'nmvb-storm')
  await page.selectOption('select[name=strategy]', 'fail_fast')
  assert.equal(await page.locator('#timeline rect.attempt').count(), 7)
  await page.screenshot({ path: join(BUILD, 'explorer-1280x800.png'), fullPage: true })
})

test('a response code is classified first, and the link reproduces the view', async () => {
  await open('profile=couchbase&service=kv&operation=unlock&failure=status&status=0x09&timeout=2500')
  assert.equal(await text('#action'), 'no retry')
  assert.match(await text('#classified'), /surface as cas_mismatch/)
  await page.fill('input[name=status]', '0x86')
  assert.equal(await text('#action'), 'retry')
  const url = page.url()
  await page.goto('about:blank')
  await page.goto(url)
  await page.waitForSelector('body[data-ready="1"]')
  assert.equal(await page.inputValue('input[name=status]'), '0x86')
  assert.equal(await text('#action'), 'retry')
})

test('MongoDB and HTTP profiles decide through the same engine', async () => {
  await open('profile=mongodb&mongo_op=updateMany&mongo_kind=network&attempts=0')
  assert.equal(await text('#action'), 'surface')
  await page.selectOption('select[name=mongo_op]', 'updateOne')
  assert.equal(await text('#action'), 'retry')
  await open('profile=http&http_kind=response&http_status=503&attempts=0&elapsed=0&timeout=10000&max_attempts=5')
  assert.equal(await text('#action'), 'retry')
  await page.fill('input[name=http_status]', '404')
  assert.equal(await text('#action'), 'stop')
})

test('bad input shows a typed error instead of breaking the page', async () => {
  await open('profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_LOCKED')
  await page.fill('input[name=timeout]', '-5')
  assert.equal(await page.locator('#error').isVisible(), true)
  assert.match(await text('#error'), /timeout/)
  await page.fill('input[name=timeout]', '2500')
  assert.equal(await page.locator('#error').isVisible(), false)
})

test('it reads well at phone width', async () => {
  await page.setViewportSize({ width: 390, height: 844 })
  await open('profile=couchbase&service=kv&operation=get&failure=reason&reason=KV_TEMPORARY_FAILURE&pattern=temporary')
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the viewport`)
  await page.screenshot({ path: join(BUILD, 'explorer-390x844.png'), fullPage: true })
  await page.setViewportSize({ width: 1280, height: 800 })
  assert.deepEqual(page.errors, [])
})
