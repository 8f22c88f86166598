// A static file server for the explorer, bound to 127.0.0.1 only. `node scripts/serve.mjs PORT`
// serves bindings-wasm/ until interrupted; tests import `serve()` and close it themselves.
// Bodies go out compressed when the request accepts it: gzip first, else br, else as they are.
// On the 560 KB module (measured here): gzip -9 28 ms -> 219 KB; br quality 5 43 ms -> 192 KB;
// br's default quality 11 took 994 ms for 169 KB, too slow per request.
import { createServer } from 'node:http'
import { readFile } from 'node:fs/promises'
import { extname, join, normalize } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { brotliCompress, constants, gzip } from 'node:zlib'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml'
}
const ENCODERS = {
  gzip: (body) => promisify(gzip)(body, { level: 9 }),
  br: (body) => promisify(brotliCompress)(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })
}

/** The encoding to answer with: the first of ours the Accept-Encoding header allows (q > 0). */
export function pickEncoding (header = '') {
  const accepted = new Map(header.split(',').map((part) => {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean)
    return [name, q ? Number(q[1]) : 1]
  }))
  return Object.keys(ENCODERS).find((e) => (accepted.get(e) ?? accepted.get('*') ?? 0) > 0) ?? null
}

/** Starts the server for `root` (this folder by default) on 127.0.0.1 (port 0 picks a free one); resolves to { url, close }. */
export function serve (port = 0, root = ROOT) {
  const server = createServer(async (req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '')
    let body
    try {
      body = await readFile(join(root, path))
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('not found')
      return
    }
    const headers = { 'content-type': TYPES[extname(path)] ?? 'application/octet-stream', 'cache-control': 'no-cache', vary: 'accept-encoding' }
    const encoding = pickEncoding(req.headers['accept-encoding'])
    if (encoding) {
      body = await ENCODERS[encoding](body)
      headers['content-encoding'] = encoding
    }
    headers['content-length'] = body.length
    res.writeHead(200, headers)
    res.end(req.method === 'HEAD' ? undefined : body)
  })
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r) }) })
  }))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { url } = await serve(Number(process.argv[2] ?? 8765))
  console.log(`serving ${ROOT} at ${url}/demo/index.html (Ctrl-C to stop)`)
}
