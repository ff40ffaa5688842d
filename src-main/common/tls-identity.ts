/**
 * A TLS listener's identity (private key and certificate chain) that changes without a restart.
 * Two kinds: a pair CertDesk issues itself from its own CA (made again at two thirds of its
 * life, as ACME clients renew), and a pair given as files (read again when the files change,
 * as certbot's or an operator's renewal replaces them). Every new pair is checked before it is
 * used: the key must match the certificate and the certificate must name the listener's host,
 * so a half-written renewal (the certificate replaced, the key not yet) or a wrong file leaves
 * the pair in force as it was, and says why. The listener gives each new pair to
 * `tls.Server.setSecureContext`: connections made from then on get it, open ones keep theirs.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto'
import { constants, watch, type FSWatcher } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'

export interface TlsPair {
  /** PEM private key. */
  key: string
  /** PEM certificate chain, leaf first. */
  cert: string
}

/** What the listener presents now, for logs and tests. */
export interface TlsPairInfo {
  /** Upper-case hex, as openssl and Node print it. */
  serial: string
  notBefore: Date
  notAfter: Date
  /** Where it came from: `issued by the CertDesk CA` or the certificate file's path. */
  source: string
}

export interface TlsIdentityOptions {
  /** Makes or reads a pair. */
  load: () => Promise<TlsPair>
  /** The host name the certificate must cover (RFC 6125 §6.4, as clients check it). */
  host: string
  /** `issued`: made again at two thirds of its life; `files`: read again when `files` change. */
  kind: 'issued' | 'files'
  /** The files a `files` identity reads (watched through their folders, and polled). */
  files?: string[]
  source: string
  /** Told each pair after the first (which `start` returns), to put in force. */
  onChange?: (pair: TlsPair, info: TlsPairInfo) => void
  /** Told why a new pair was refused or could not be made; the pair in force stays. */
  onError?: (message: string) => void
  /** Milliseconds since the epoch; the system clock unless a test moves it. */
  now?: () => number
}

/** A key or certificate file larger than this is not one (a chain of ten RSA-4096 certificates is ~20 KiB). */
export const MAX_PEM_BYTES = 1024 * 1024

/**
 * How often given files are read again even without a change notice: inotify misses changes on
 * network file systems and through some bind mounts, and a renewed certificate should be in
 * force within a minute anyway.
 */
export const FILE_POLL_MS = 30_000

/** A change notice is acted on after this quiet time, so a renewal that writes two files is read once. */
const SETTLE_MS = 300

/** After a failed renewal of an issued pair, the next try. */
const RETRY_MS = 5 * 60_000

/** Longest single timer wait (setTimeout holds at most 2^31-1 ms); the renewal time is checked again after. */
const MAX_WAIT_MS = 6 * 3600_000

/** What is wrong with `pair` for `host`, or its facts when nothing is. */
export function checkPair(pair: TlsPair, host: string): TlsPairInfo | { problem: string } {
  let leaf: X509Certificate
  try {
    leaf = new X509Certificate(pair.cert)
  } catch {
    return { problem: 'the certificate file holds no PEM certificate' }
  }
  let key
  try {
    key = createPrivateKey(pair.key)
  } catch {
    // PKCS#8 (`ENCRYPTED PRIVATE KEY`) or OpenSSL's legacy form (`Proc-Type: 4,ENCRYPTED`): a
    // passphrase nobody is there to type at a renewal.
    const why = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(pair.key)
      ? 'it is encrypted; give the key without a passphrase, readable by CertDesk only'
      : 'it holds no PEM private key'
    return { problem: `could not read the private key: ${why}` }
  }
  if (!leaf.checkPrivateKey(key)) return { problem: 'the private key does not belong to the certificate' }
  if (leaf.checkHost(host) === undefined) {
    return { problem: `the certificate does not name ${host} (${leaf.subjectAltName ?? leaf.subject})` }
  }
  return {
    serial: leaf.serialNumber.toUpperCase(),
    notBefore: new Date(leaf.validFrom),
    notAfter: new Date(leaf.validTo),
    source: ''
  }
}

/**
 * Reads a PEM file, refusing what cannot be one: a file over MAX_PEM_BYTES, something not a
 * regular file (a FIFO would block the read for good), and, for a private key, a file others
 * may read (as OpenSSH refuses a loose key file; the group may read it, as Debian's `ssl-cert`
 * group does).
 */
export async function readPemFile(path: string, what: 'certificate' | 'private key'): Promise<string> {
  // Opened without blocking, then checked through the descriptor: what is read is what was checked.
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`could not read the ${what} file ${path}: ${err.code ?? err.message}`)
  })
  try {
    const st = await handle.stat()
    if (!st.isFile()) throw new Error(`could not read the ${what} file ${path}: it is not a regular file`)
    if (st.size > MAX_PEM_BYTES)
      throw new Error(`could not read the ${what} file ${path}: it is larger than ${MAX_PEM_BYTES} bytes`)
    if (what === 'private key' && (st.mode & 0o007) !== 0)
      throw new Error(
        `could not read the private key file ${path}: others may read it (mode ${(st.mode & 0o777).toString(8)}); chmod o-rwx it`
      )
    return (await handle.readFile({ encoding: 'utf8' })).slice(0, MAX_PEM_BYTES)
  } finally {
    await handle.close()
  }
}

/** The pair in two files, read as they are now. */
export const filePair =
  (certFile: string, keyFile: string): (() => Promise<TlsPair>) =>
  async () => ({
    cert: await readPemFile(certFile, 'certificate'),
    key: await readPemFile(keyFile, 'private key')
  })

const fingerprint = (pair: TlsPair): string =>
  createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex')

export class TlsIdentity {
  private pair: TlsPair | null = null
  private info: TlsPairInfo | null = null
  private print = ''
  private timer: NodeJS.Timeout | null = null
  private settle: NodeJS.Timeout | null = null
  private watchers: FSWatcher[] = []
  private running: Promise<boolean> | null = null
  private closed = false
  private readonly now: () => number

  constructor(private readonly opts: TlsIdentityOptions) {
    this.now = opts.now ?? (() => Date.now())
  }

  /** The first pair, checked; throws with the reason when there is none to start with. */
  async start(): Promise<TlsPair> {
    const pair = await this.opts.load()
    const checked = checkPair(pair, this.opts.host)
    if ('problem' in checked)
      throw new Error(`could not use the TLS certificate of ${this.opts.source}: ${checked.problem}`)
    this.take(pair, checked, false)
    if (this.opts.kind === 'files') this.watchFiles()
    this.schedule()
    return pair
  }

  /** The pair in force. */
  get current(): TlsPair {
    if (!this.pair) throw new Error('could not present a TLS certificate: the identity has not started')
    return this.pair
  }

  get currentInfo(): TlsPairInfo | null {
    return this.info
  }

  /**
   * Makes (issued) or reads (files) the pair again now, and puts it in force when it passes the
   * checks and differs from the one in force. True when a new pair is in force. Calls made while
   * one runs share it.
   */
  reload(): Promise<boolean> {
    this.running ??= this.refresh().finally(() => {
      this.running = null
    })
    return this.running
  }

  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    if (this.settle) clearTimeout(this.settle)
    for (const w of this.watchers) w.close()
    this.watchers = []
  }

  private async refresh(): Promise<boolean> {
    let pair: TlsPair
    try {
      pair = await this.opts.load()
    } catch (err) {
      this.opts.onError?.(`could not renew the TLS certificate of ${this.opts.source}: ${(err as Error).message}`)
      return false
    } finally {
      this.schedule()
    }
    if (this.closed || fingerprint(pair) === this.print) return false
    const checked = checkPair(pair, this.opts.host)
    if ('problem' in checked) {
      this.opts.onError?.(
        `kept the TLS certificate in force (serial ${this.info?.serial ?? '?'}): the new one of ${this.opts.source} is refused: ${checked.problem}`
      )
      // Not remembered: the same files are read again on the next notice or poll, and taken once whole.
      return false
    }
    this.take(pair, checked, true)
    this.schedule()
    return true
  }

  private take(pair: TlsPair, info: TlsPairInfo, announce: boolean): void {
    this.pair = pair
    this.print = fingerprint(pair)
    this.info = { ...info, source: this.opts.source }
    if (announce) this.opts.onChange?.(pair, this.info)
  }

  /** The next look: the renewal time of an issued pair, the poll of given files. */
  private schedule(): void {
    if (this.closed) return
    if (this.timer) clearTimeout(this.timer)
    let wait = FILE_POLL_MS
    if (this.opts.kind === 'issued' && this.info) {
      const { notBefore, notAfter } = this.info
      // Two thirds of the lifetime, as certbot and lego renew by default (30 days before the end of 90).
      const due = notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3
      wait = Math.max(due - this.now(), 0)
      if (this.running && wait === 0) wait = RETRY_MS
    }
    this.timer = setTimeout(() => void this.due(), Math.min(wait, MAX_WAIT_MS))
    this.timer.unref()
  }

  private async due(): Promise<void> {
    if (this.opts.kind === 'issued' && this.info) {
      const { notBefore, notAfter } = this.info
      const due = notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3
      if (this.now() < due) return this.schedule()
    }
    await this.reload()
  }

  /**
   * Change notices for the given files. The folders are watched, not the files: a renewal
   * usually writes a new file and renames it over the old one, or (certbot) points a symlink
   * at a new file, and a watch on the old file would see neither.
   */
  private watchFiles(): void {
    const folders = new Set<string>()
    // certbot's live/ names are links into archive/, and a renewal replaces the links: their folder changes.
    for (const f of this.opts.files ?? []) folders.add(dirname(resolve(f)))
    for (const folder of folders) {
      try {
        const w = watch(folder, { persistent: false }, () => this.changed())
        w.on('error', () => w.close())
        this.watchers.push(w)
      } catch {
        // No notices for this folder (gone, or not watchable): the poll still reads the files.
      }
    }
  }

  private changed(): void {
    if (this.closed) return
    if (this.settle) clearTimeout(this.settle)
    this.settle = setTimeout(() => void this.reload(), SETTLE_MS)
    this.settle.unref()
  }
}
