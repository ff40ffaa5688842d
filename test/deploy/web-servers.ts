/**
 * Real nginx, Apache and HAProxy (Debian packages) on loopback high ports, each configured with
 * the snippet docs/deploy.md gives for its layout, so the documented configuration is the one
 * tested. Every server runs in the foreground under a watchdog shell in its own process group:
 * the watchdog stops the group when the test process is gone (even killed) or when `stop()` is
 * called, so nothing outlives the test. Pid and error logs stay in a temp dir; the servers run
 * as root or as a normal user alike.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { X509Certificate } from 'node:crypto'
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { connect } from 'node:tls'

export type ServerKind = 'nginx' | 'apache' | 'haproxy'

/** The folder and name the snippets in docs/deploy.md use; replaced by each test's own. */
const DOC_FOLDER = '/etc/certdesk/shop.example.com'
const DOC_NAME = 'shop.example.com'

/** The configuration block docs/deploy.md shows under `<!-- snippet: NAME -->`. */
export function docSnippet(name: string): string {
  const doc = readFileSync(join(__dirname, '../../docs/deploy.md'), 'utf8')
  const m = new RegExp(`<!-- snippet: ${name} -->\\s*\`\`\`[a-z]*\\n([\\s\\S]*?)\`\`\``).exec(doc)
  if (!m) throw new Error(`docs/deploy.md has no snippet "${name}"`)
  return m[1]
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

export interface WebServer {
  kind: ServerKind
  port: number
  /** The reload a command target runs: checks the config, then reloads gracefully. */
  reloadCommand: string
  /** The server's own error log, for a failing test's message. */
  log(): string
  /** Whether the server process is still up. */
  alive(): boolean
  stop(): Promise<void>
}

const isRoot = process.getuid?.() === 0

/**
 * Starts `kind` serving `folder` (the layout's files, which must exist) for `domain` on a free
 * loopback port; resolves once it answers TLS.
 */
export async function startWebServer(
  kind: ServerKind,
  folder: string,
  domain: string,
  work: string,
  /** The process whose end stops the server: this test process unless a test says otherwise. */
  parentPid = process.pid
): Promise<WebServer> {
  const port = await freePort()
  const dir = join(work, `${kind}-run`)
  mkdirSync(dir, { recursive: true })
  const snippet = docSnippet(kind).replaceAll(DOC_FOLDER, folder).replaceAll(DOC_NAME, domain)
  const errorLog = join(dir, 'error.log')
  const pidFile = join(dir, `${kind}.pid`)
  const conf = join(dir, `${kind}.conf`)
  let argv: string[]
  let reloadCommand: string
  if (kind === 'nginx') {
    writeFileSync(
      conf,
      `${isRoot ? 'user nobody nogroup;\n' : ''}daemon off;
worker_processes 1;
pid ${pidFile};
error_log ${errorLog} notice;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy; fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
${snippet.replace('listen 443 ssl;', `listen 127.0.0.1:${port} ssl;`)}
}
`
    )
    const base = `/usr/sbin/nginx -p '${dir}' -e '${errorLog}' -c '${conf}'`
    argv = ['/usr/sbin/nginx', '-p', dir, '-e', errorLog, '-c', conf]
    reloadCommand = `${base} -t -q && ${base} -s reload`
  } else if (kind === 'apache') {
    const mods = '/usr/lib/apache2/modules'
    writeFileSync(
      conf,
      `ServerRoot ${dir}
DefaultRuntimeDir ${dir}
PidFile ${pidFile}
ErrorLog ${errorLog}
LogLevel warn
ServerName localhost
${isRoot ? 'User nobody\nGroup nogroup\n' : ''}LoadModule mpm_event_module ${mods}/mod_mpm_event.so
LoadModule authz_core_module ${mods}/mod_authz_core.so
LoadModule socache_shmcb_module ${mods}/mod_socache_shmcb.so
LoadModule ssl_module ${mods}/mod_ssl.so
StartServers 1
ServerLimit 1
ThreadsPerChild 4
MaxRequestWorkers 4
SSLSessionCache shmcb:${dir}/ssl_scache(51200)
${snippet.replace('Listen 443', `Listen 127.0.0.1:${port}`).replace('*:443', `127.0.0.1:${port}`)}
`
    )
    argv = ['/usr/sbin/apache2', '-f', conf, '-DFOREGROUND']
    reloadCommand = `/usr/sbin/apache2 -f '${conf}' -t && /usr/sbin/apache2 -f '${conf}' -k graceful`
  } else {
    writeFileSync(
      conf,
      `global
    log stderr format raw local0 notice
defaults
    timeout connect 2s
    timeout client 5s
    timeout server 5s
${snippet.replace('bind :443', `bind 127.0.0.1:${port}`)}
`
    )
    argv = ['/usr/sbin/haproxy', '-W', '-f', conf, '-p', pidFile]
    reloadCommand = `/usr/sbin/haproxy -c -q -f '${conf}' && kill -USR2 "$(cat '${pidFile}')"`
  }

  // The watchdog: the server in the background, polled together with the test process; when
  // either is gone (or the watchdog gets TERM), the whole process group is stopped.
  const watchdog = spawn(
    '/bin/sh',
    [
      '-c',
      `parent=$1; shift; "$@" >>'${errorLog}' 2>&1 & server=$!
       trap 'kill -TERM 0' TERM
       while kill -0 "$parent" 2>/dev/null && kill -0 "$server" 2>/dev/null; do sleep 0.2; done
       kill -TERM 0`,
      'watchdog',
      String(parentPid),
      ...argv
    ],
    { detached: true, stdio: 'ignore' }
  )
  watchdog.unref()
  const exited = new Promise<void>((resolve) => watchdog.once('exit', () => resolve()))
  let gone = false
  void exited.then(() => (gone = true))

  const server: WebServer = {
    kind,
    port,
    reloadCommand,
    log: () => {
      try {
        return readFileSync(errorLog, 'utf8')
      } catch {
        return ''
      }
    },
    alive: () => {
      if (gone) return false
      try {
        const pid = Number(readFileSync(pidFile, 'utf8').trim())
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    },
    stop: async () => {
      if (gone) return
      stopGroup(watchdog)
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))])
      // The group's stragglers (workers) get KILL once the watchdog is gone.
      try {
        process.kill(-watchdog.pid!, 'SIGKILL')
      } catch {
        // already gone
      }
    }
  }
  const deadline = Date.now() + 10_000
  for (;;) {
    const got = await servedChain(port, domain).catch(() => null)
    if (got) return server
    if (gone || Date.now() > deadline) {
      await server.stop()
      throw new Error(`${kind} did not start: ${server.log()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

function stopGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGTERM')
  } catch {
    // already gone
  }
}

/** The chain a server presents on `port` for `servername`. */
export function servedChain(port: number, servername: string): Promise<X509Certificate[]> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error('no handshake'))
    }, 3000)
    socket.once('secureConnect', () => {
      const chain: X509Certificate[] = []
      let c = socket.getPeerCertificate(true)
      const seen = new Set<string>()
      while (c?.raw && !seen.has(c.fingerprint256)) {
        seen.add(c.fingerprint256)
        chain.push(new X509Certificate(c.raw))
        c = c.issuerCertificate
      }
      clearTimeout(timer)
      socket.end()
      resolve(chain)
    })
    socket.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
  })
}

/**
 * The serial a server serves, after checking over TLS that the chain it sends leads to `rootPem`
 * (each certificate signed by the next, the last by the root) and that the leaf is for `domain`.
 */
export async function servedSerial(port: number, domain: string, rootPem: string): Promise<string> {
  const chain = await servedChain(port, domain)
  const root = new X509Certificate(rootPem)
  const leaf = chain[0]
  if (!leaf) throw new Error('no certificate served')
  if (!leaf.checkHost(domain)) throw new Error(`served certificate is not for ${domain}`)
  const path = [...chain.filter((c) => c.fingerprint256 !== root.fingerprint256), root]
  for (let i = 0; i < path.length - 1; i++) {
    if (!path[i].verify(path[i + 1].publicKey))
      throw new Error(`certificate ${i} of the served chain is not signed by the next`)
  }
  return leaf.serialNumber.toUpperCase()
}

/** openssl's view, for a test that wants to say the PFX opens with its password. */
export function opensslPkcs12(file: string, password: string): { status: number | null; out: string } {
  const r = spawnSync('openssl', ['pkcs12', '-in', file, '-nodes', '-passin', `pass:${password}`], { encoding: 'utf8' })
  return { status: r.status, out: r.stdout + r.stderr }
}

/**
 * Every entry of a folder with its mode and content (a directory or other entry by its kind): a
 * write that is refused, or undone, must leave it equal.
 */
export function folderSnapshot(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((n) => {
        const st = lstatSync(join(dir, n))
        const body = st.isFile() ? readFileSync(join(dir, n), 'base64') : st.isDirectory() ? 'dir' : 'link'
        return [n, `${(st.mode & 0o777).toString(8)} ${body}`]
      })
  )
}
