/**
 * certbot and lego (Debian's) as a customer runs them against CertDesk's ACME server: External
 * Account Binding from the subscription, http-01 answered by the client's own responder on
 * loopback, the CertDesk root trusted through the variable each client reads; and `openssl
 * verify` of the chain they download.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { x509 } from '../../src-main/core/certificates/x509'
import { certbotCertonly, run, type Run } from './acme'

export interface AcmeClientRun {
  /** The ACME directory URL. */
  server: string
  eabKid: string
  eabHmacKey: string
  names: string[]
  email: string
  /** The loopback port the client's http-01 responder listens on. */
  httpPort: number
  /** The CertDesk root, PEM, in a file. */
  rootPath: string
  /**
   * The argv that runs a client command where the server's name resolves (a hosts overlay,
   * client-network.ts, for a public name that is no name of this machine); as is without it.
   */
  via?: (cmd: string, args: string[]) => string[]
}

/** `certbot certonly --standalone` in `dir` (config, work and logs folders inside it). */
export function certbot(dir: string, c: AcmeClientRun, seconds = 120): Promise<Run> {
  const args = certbotCertonly({
    server: c.server,
    kid: c.eabKid,
    hmac: c.eabHmacKey,
    httpPort: c.httpPort,
    address: '127.0.0.1',
    dir,
    names: c.names,
    email: c.email
  })
  return runVia(c, 'certbot', args, { env: { REQUESTS_CA_BUNDLE: c.rootPath }, seconds })
}

/** Runs `cmd` as the client does: through `c.via` when it has a view of names of its own. */
function runVia(c: AcmeClientRun, cmd: string, args: string[], opts: Parameters<typeof run>[2]): Promise<Run> {
  const argv = c.via ? c.via(cmd, args) : [cmd, ...args]
  return run(argv[0], argv.slice(1), opts)
}

/** `lego … run` (or `command`) with its files in `dir`. */
export function lego(dir: string, c: AcmeClientRun, command: string[] = ['run'], seconds = 120): Promise<Run> {
  return runVia(
    c,
    'lego',
    [
      '--server',
      c.server,
      '--eab',
      '--kid',
      c.eabKid,
      `--hmac=${c.eabHmacKey}`,
      '--email',
      c.email,
      '--accept-tos',
      '--path',
      dir,
      '--http',
      '--http.port',
      `127.0.0.1:${c.httpPort}`,
      ...c.names.flatMap((n) => ['--domains', n]),
      ...command
    ],
    { env: { LEGO_CA_CERTIFICATES: c.rootPath }, seconds }
  )
}

/** Splits a PEM bundle (leaf first) and checks it with openssl against the root in `rootPath`. */
export async function opensslVerify(
  chainPem: string,
  dir: string,
  rootPath: string
): Promise<{ code: number; out: string; leaf: InstanceType<typeof x509.X509Certificate>; count: number }> {
  const certs = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  writeFileSync(join(dir, 'leaf.pem'), `${certs[0]}\n`)
  writeFileSync(join(dir, 'intermediates.pem'), `${certs.slice(1).join('\n')}\n`)
  const r = await run('openssl', [
    'verify',
    '-purpose',
    'sslserver',
    '-CAfile',
    rootPath,
    '-untrusted',
    join(dir, 'intermediates.pem'),
    join(dir, 'leaf.pem')
  ])
  return { code: r.code, out: r.stdout + r.stderr, leaf: new x509.X509Certificate(certs[0]), count: certs.length }
}
