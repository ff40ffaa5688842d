// The read baseline: a bare node:http server answering each path with the very bytes CertDesk
// answered it with, built once. What CertDesk adds on top (auth, validation, SQLite, JSON) is
// the difference. Usage: node bare-server.mjs <responses.json>   ({ "<path?query>": "<body>" })
import http from 'node:http'
import { readFileSync } from 'node:fs'

const bodies = new Map(
  Object.entries(JSON.parse(readFileSync(process.argv[2], 'utf8'))).map(([path, body]) => [path, Buffer.from(body)])
)
const server = http.createServer((req, res) => {
  const body = bodies.get(req.url)
  if (!body) {
    res
      .writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
      .end('{"success":false,"error":"not found"}')
    return
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length }).end(body)
})
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () =>
  process.stdout.write(`bare server listening on http://127.0.0.1:${server.address().port}\n`)
)
process.on('SIGTERM', () => server.close(() => process.exit(0)))
