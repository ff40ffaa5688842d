/**
 * A tripwire for tests that make names resolve to addresses off this machine: every TCP
 * connection this process opens (net, http, https, tls, fetch all end in Socket#connect) must go
 * to loopback. Any other target is recorded and the socket is destroyed before it is opened, so
 * no packet leaves, even when the code under test gets it wrong. Only the connection attempt is
 * watched; loopback connections run as usual.
 */
import { isIP, Socket } from 'node:net'

export interface NetworkFence {
  /** `host:port` of every connection that was stopped. */
  attempts: string[]
  restore(): void
}

const isLoopback = (host: string): boolean => {
  if (host === 'localhost') return true
  const h = host.replace(/^\[(.*)\]$/, '$1')
  if (isIP(h) === 4) return h.startsWith('127.')
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./i.test(h)
  return false
}

/** Where Socket#connect was asked to go: `(options)`, `([options, cb])` as net normalizes it, or `(port, host)`. */
function destination(args: unknown[]): { host: string; port: unknown } | null {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0]
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first }
  }
  if (first && typeof first === 'object') {
    const o = first as { host?: string; port?: unknown; path?: string }
    if (o.path) return null // a Unix socket stays on this machine
    return { host: o.host ?? 'localhost', port: o.port }
  }
  return null
}

export function fenceToLoopback(): NetworkFence {
  const original = Socket.prototype.connect
  const attempts: string[] = []
  Socket.prototype.connect = function (this: Socket, ...args: unknown[]): Socket {
    const to = destination(args)
    if (to && !isLoopback(to.host)) {
      attempts.push(`${to.host}:${String(to.port)}`)
      process.nextTick(() => this.destroy(new Error(`the test's network fence stopped a connection to ${to.host}`)))
      return this
    }
    return (original as (...a: unknown[]) => Socket).apply(this, args)
  } as typeof original
  return {
    attempts,
    restore: () => {
      Socket.prototype.connect = original
    }
  }
}
