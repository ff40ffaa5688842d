/**
 * A customer's machine for the public listener's tests: somewhere else on the network, which
 * reaches CertDesk only by the public name and has none of CertDesk's loopback listeners.
 *
 * Where the test may create network namespaces (root, CAP_NET_ADMIN), it is a network
 * namespace joined to this one by a veth pair, with its own resolv.conf pointing at a test DNS
 * server (`ip netns exec` mounts /etc/netns/NAME/resolv.conf over /etc/resolv.conf): the client
 * resolves the public name through DNS, and this machine's 127.0.0.1 is not its 127.0.0.1.
 *
 * Elsewhere it is a user and mount namespace (`unshare --user --map-root-user --mount`) with a
 * hosts file naming the public name 127.0.0.2, a second loopback address: a weaker stand-in (the
 * client could reach the loopback listeners), used only where namespaces of the network kind
 * cannot be made. CERTDESK_TEST_CLIENT_NET=loopback picks it on purpose.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface ClientNetwork {
  kind: 'netns' | 'loopback'
  /** Where CertDesk's public listener listens: the address the client reaches this machine by. */
  serverAddress: string
  /** Where the client's own servers (certbot's http-01 responder) listen, which CertDesk reaches. */
  clientAddress: string
  /** `address:port` of the DNS server the client and CertDesk's checks ask (for the netns kind, port 53 on serverAddress). */
  dnsAt: string | null
  /** The argv that runs `cmd args` on the client. */
  argv(cmd: string, args: string[]): string[]
  close(): void
}

const ip = (...args: string[]): string =>
  execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })

function tryNetns(): ClientNetwork | null {
  if (process.env.CERTDESK_TEST_CLIENT_NET === 'loopback') return null
  const id = `${process.pid.toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`.slice(-7)
  const ns = `cdtest-${id}`
  const host = `cdh${id}`
  const peer = `cdc${id}`
  // A /30 of 10.213.0.0/16 of its own, so parallel runs do not share addresses.
  const n = (process.pid * 7 + Math.floor(Math.random() * 1000)) % 16000
  const net = `10.213.${Math.floor(n / 64) % 256}.${(n % 64) * 4}`
  const [a, b, c, d] = net.split('.').map(Number)
  const serverAddress = `${a}.${b}.${c}.${d + 1}`
  const clientAddress = `${a}.${b}.${c}.${d + 2}`
  const etc = `/etc/netns/${ns}`
  try {
    ip('netns', 'add', ns)
  } catch {
    return null
  }
  const close = (): void => {
    for (const cmd of [
      ['netns', 'del', ns],
      ['link', 'del', host]
    ]) {
      try {
        ip(...cmd)
      } catch {
        // already gone (deleting the namespace removes the veth pair)
      }
    }
    rmSync(etc, { recursive: true, force: true })
    try {
      // /etc/netns itself goes too once no namespace uses it (rmdir refuses a folder still in use).
      rmdirSync('/etc/netns')
    } catch {
      // another namespace's files are there, or it was never made
    }
  }
  try {
    ip('link', 'add', host, 'type', 'veth', 'peer', 'name', peer)
    ip('link', 'set', peer, 'netns', ns)
    ip('addr', 'add', `${serverAddress}/30`, 'dev', host)
    ip('link', 'set', host, 'up')
    ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${clientAddress}/30`, 'dev', peer)
    ip('netns', 'exec', ns, 'ip', 'link', 'set', peer, 'up')
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up')
    mkdirSync(etc, { recursive: true })
    // The client resolves every name through the test DNS server on this side of the link.
    writeFileSync(join(etc, 'resolv.conf'), `nameserver ${serverAddress}\noptions timeout:2 attempts:2\n`)
    // A hosts file of its own too, so this machine's own entries never answer for the client.
    writeFileSync(join(etc, 'hosts'), '127.0.0.1 localhost\n')
  } catch (err) {
    close()
    throw new Error(`could not wire the client's network namespace: ${(err as Error).message}`, { cause: err })
  }
  return {
    kind: 'netns',
    serverAddress,
    clientAddress,
    dnsAt: `${serverAddress}:53`,
    argv: (cmd, args) => ['ip', 'netns', 'exec', ns, cmd, ...args],
    close
  }
}

/**
 * A program's own view of /etc/hosts, naming `name` at `address`: the argv that runs a command
 * in a user and mount namespace with that hosts file mounted over the machine's. The program's
 * network is this machine's; only its name lookups differ (glibc and Go's resolver both read
 * the file), and nothing of the machine's own configuration changes.
 */
export interface HostsOverlay {
  argv(cmd: string, args: string[]): string[]
  close(): void
}

export function hostsOverlay(name: string, address: string): HostsOverlay {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-client-'))
  const hosts = join(dir, 'hosts')
  writeFileSync(hosts, `127.0.0.1 localhost\n${address} ${name}\n`)
  try {
    execFileSync('unshare', ['--user', '--map-root-user', '--mount', 'true'], { stdio: 'ignore' })
  } catch {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(
      'could not give the test client a hosts file of its own: `unshare --user --mount` (needs unprivileged user namespaces) does not work here'
    )
  }
  return {
    argv: (cmd, args) => [
      'unshare',
      '--user',
      '--map-root-user',
      '--mount',
      'sh',
      '-c',
      'mount --bind "$0" /etc/hosts && exec "$@"',
      hosts,
      cmd,
      ...args
    ],
    close: () => rmSync(dir, { recursive: true, force: true })
  }
}

function loopbackClient(publicName: string): ClientNetwork {
  const overlay = hostsOverlay(publicName, '127.0.0.2')
  return { kind: 'loopback', serverAddress: '127.0.0.2', clientAddress: '127.0.0.1', dnsAt: null, ...overlay }
}

/** The customer's side: a network namespace when one can be made, else the loopback stand-in. */
export function clientNetwork(publicName: string): ClientNetwork {
  return tryNetns() ?? loopbackClient(publicName)
}
