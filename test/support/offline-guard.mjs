// Loaded with `node --import` into a tool a test runs (Redocly, Prism, the client generator):
// every connection to an address off this machine, and every DNS lookup of a name that is not
// loopback, is refused before a packet leaves and reported on stderr with the marker below, so
// the test can prove the tool worked offline.
import dns from 'node:dns'
import net from 'node:net'

export const MARKER = 'OFFLINE-GUARD: refused'
const loopback = (host) => {
  if (host === undefined || host === null || host === 'localhost') return true
  const h = String(host).replace(/^\[(.*)\]$/, '$1')
  if (net.isIP(h) === 4) return h.startsWith('127.')
  if (net.isIP(h) === 6) return h === '::1' || /^::ffff:127\./i.test(h)
  return false
}
const report = (what) => process.stderr.write(`${MARKER} ${what}\n`)

const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (...args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0]
  const host =
    typeof first === 'object' && first !== null
      ? first.path
        ? 'localhost'
        : first.host
      : typeof args[1] === 'string'
        ? args[1]
        : undefined
  if (!loopback(host)) {
    report(`a connection to ${host}`)
    process.nextTick(() => this.destroy(new Error(`offline: no connection to ${host}`)))
    return this
  }
  return connect.apply(this, args)
}

for (const api of [dns, dns.promises]) {
  const lookup = api.lookup
  api.lookup = function (host, ...rest) {
    if (!loopback(host)) {
      report(`a DNS lookup of ${host}`)
      const err = Object.assign(new Error(`offline: no lookup of ${host}`), { code: 'ENOTFOUND' })
      const cb = rest.find((x) => typeof x === 'function')
      if (cb) return void process.nextTick(() => cb(err))
      return Promise.reject(err)
    }
    return lookup.call(this, host, ...rest)
  }
}
