/**
 * The DNS resolvers every domain check asks: the dns DCV method (BR §3.2.2.4.7), ACME dns-01
 * (RFC 8555 §8.4), and the address lookup before an http/https DCV or http-01 check
 * (validation-target.ts). The `dcv.dns_resolver` setting names the server (tests point it at a
 * loopback server); without it the system's servers are asked. One resolver is kept per server
 * and reused by every check, so checks share c-ares' channel instead of opening one each.
 */
import { Resolver } from 'node:dns/promises'

/**
 * How long one DNS query waits for an answer, and how often it is sent. c-ares waits longer on
 * the retry, so a server that never answers fails a query after about three times this (6 s);
 * a working server answers within milliseconds, and a lost UDP datagram gets a second chance.
 */
export const DNS_TIMEOUT_MS = 2000
export const DNS_TRIES = 2

/** Different servers kept at most; the setting changes rarely, so this only bounds a misuse. */
const MAX_RESOLVERS = 16
const SYSTEM = 'system'
const resolvers = new Map<string, Resolver>()

/**
 * The resolver for `server` (`host:port`), or for the system's servers when null. The system's
 * servers are read when that resolver is made, as Node's own default resolver does.
 */
export function dnsResolver(server: string | null): Resolver {
  const key = server || SYSTEM
  let r = resolvers.get(key)
  if (!r) {
    r = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES })
    if (server) r.setServers([server])
    if (resolvers.size >= MAX_RESOLVERS) resolvers.delete(resolvers.keys().next().value as string)
    resolvers.set(key, r)
  }
  return r
}
