/**
 * The Host header check both local listeners make (the reseller API and the ACME server): a
 * page on another origin that re-binds its DNS name to 127.0.0.1 still sends its own name as
 * Host (DNS rebinding), so only loopback names, and names the user configured, are answered.
 */

/** The host name of a Host header (`name[:port]`, `[v6][:port]`), lower-cased; null when malformed. */
export function hostName(header: string | undefined): string | null {
  if (!header) return null
  const m = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/.exec(header.trim().toLowerCase())
  return m ? m[1] : null
}

/** `localhost`, `[::1]` and 127.0.0.0/8 (RFC 6761 §6.3, RFC 1122 §3.2.1.3): names of this machine. */
export function isLoopbackName(name: string): boolean {
  return name === 'localhost' || name === '[::1]' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name)
}

/** The Host names one listener answers to. */
export interface HostPolicy {
  /** Loopback names (isLoopbackName): the desktop's listeners say yes, the public listener no. */
  loopback: boolean
  /** Other names, lower-case: a configured `--host`, the public name. */
  names: readonly string[]
}

/** Whether a Host header's name (hostName's answer) is one the policy accepts. */
export function hostAccepter(policy: HostPolicy): (name: string) => boolean {
  const names = new Set(policy.names.map((n) => n.toLowerCase()))
  return (name) => names.has(name) || (policy.loopback && isLoopbackName(name))
}
