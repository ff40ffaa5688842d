// A small HTTP/1.1 client over node:http for the reliability runs: every header is under our
// control (Host included), every answer is read whole, and nothing waits forever.
import http from 'node:http'
import net from 'node:net'

export function makeClient(baseUrl, { sockets = 16 } = {}) {
  const base = new URL(baseUrl)
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets })
  /** Resolves { status, headers, text } or { error } (a reset, a refused connection, a timeout). */
  const request = ({ method = 'GET', path = '/', headers = {}, body, timeoutMs = 15_000 }) =>
    new Promise((resolve) => {
      let done = false
      let finish = (v) => {
        if (!done) {
          done = true
          resolve(v)
        }
      }
      let req
      try {
        req = http.request(
          { host: base.hostname, port: base.port, method, path, headers, agent, setHost: !('host' in headers) },
          (res) => {
            const chunks = []
            res.on('data', (c) => chunks.push(c))
            res.on('end', () =>
              finish({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') })
            )
            res.on('error', (e) => finish({ error: e.code ?? e.message }))
          }
        )
      } catch (e) {
        // node refuses to send some header values at all; such a case never reaches the server
        return finish({ skipped: e.code ?? e.message })
      }
      // A hard stop too: a CONNECT answer hands the socket over and no socket timeout fires then.
      const hard = setTimeout(() => {
        req.destroy()
        finish({ error: 'TIMEOUT' })
      }, timeoutMs)
      const done0 = finish
      finish = (v) => {
        clearTimeout(hard)
        done0(v)
      }
      req.on('connect', (res, socket, head) => {
        const chunks = [head]
        socket.on('data', (c) => chunks.push(c))
        socket.on('close', () =>
          finish({ status: res.statusCode, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') })
        )
        socket.on('error', () => {})
      })
      req.on('error', (e) => finish({ error: e.code ?? e.message }))
      if (body !== undefined) req.write(body)
      req.end()
    })
  /**
   * Raw bytes on a fresh socket; resolves the raw answer text. With `body`, the head goes first
   * and the body only if no answer came within `waitMs`, as a client honouring an early answer
   * does: a server refusing a body by its Content-Length (413) answers and closes, and bytes
   * still sent after that make the kernel reset the connection and drop the answer unread.
   */
  const raw = (head, { body, waitMs = 100, timeoutMs = 8_000 } = {}) =>
    new Promise((resolve) => {
      const socket = net.connect(Number(base.port), base.hostname)
      let out = ''
      const t = setTimeout(() => socket.destroy(), timeoutMs)
      socket.on('data', (d) => (out += d))
      socket.on('close', () => {
        clearTimeout(t)
        resolve(out)
      })
      socket.on('error', () => {})
      socket.write(head)
      const finish = () => setTimeout(() => socket.end(), 200) // half-close: a server waiting for more answers or gives up
      if (body === undefined) return finish()
      const started = Date.now()
      const poll = setInterval(() => {
        if (out !== '' || socket.destroyed || Date.now() - started >= waitMs) {
          clearInterval(poll)
          if (out === '' && !socket.destroyed) socket.write(body)
          finish()
        }
      }, 10)
    })
  return { request, raw, close: () => agent.destroy() }
}

/** Splits a raw HTTP/1.1 answer into status and body (enough for one answer per socket). */
export function parseRaw(text) {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
  const sep = text.indexOf('\r\n\r\n')
  return { status: m ? Number(m[1]) : null, text: sep >= 0 ? text.slice(sep + 4) : '' }
}
