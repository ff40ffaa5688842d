/**
 * On a headless Linux machine there is no session keyring: the certdesk command keeps secrets in
 * a private gnome-keyring OUTSIDE the data dir, unlocked by a random password made on first use
 * (or one the user gives), so a copy of the data dir (a backup) unwraps nothing. A second command
 * joins the keyring `serve` runs, so the README's "npm start, then npx certdesk admin apikey
 * create" works there. A keyring of the old layout (`<data dir>/keyring`, default password) is
 * moved out and re-keyed.
 * What it checks is the data dir's own files (what a copy of it holds): SQLite's book.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { keyringLocation, startKeyringSession } from '../../scripts/keyring-session.mjs'
import { CLI, envFor, ROOT } from '../support/cli'
import { engineEnv } from '../support/engine'

const base = mkdtempSync(join(tmpdir(), 'certdesk-headless-'))
const cleanups: (() => unknown)[] = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
  rmSync(base, { recursive: true, force: true })
})

/** Stops a child this test started (SIGTERM, so it can stop its own keyring) and waits for it. */
const stopChild = (child: ChildProcess) => (): Promise<unknown> => {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve()
  child.kill('SIGTERM')
  return Promise.race([exitOf(child), new Promise((r) => setTimeout(r, 15_000))])
}

/**
 * A headless login on its own machine: no session bus, its own home (where the keyring goes by
 * default), none of CertDesk's keyring variables.
 */
function machine(name: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: join(base, name) }
  for (const k of ['DBUS_SESSION_BUS_ADDRESS', 'XDG_DATA_HOME', 'XDG_RUNTIME_DIR', 'CERTDESK_DATA_DIR']) delete env[k]
  for (const k of Object.keys(env)) if (k.startsWith('CERTDESK_KEYRING')) delete env[k]
  mkdirSync(env.HOME as string, { recursive: true })
  return { ...env, ...extra }
}

const certdesk = (env: NodeJS.ProcessEnv, ...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: envFor(args, env), timeout: 60_000 })

const json = (out: string): Record<string, unknown> => JSON.parse(out) as Record<string, unknown>
const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8)

/** Every file and folder under `dir`, relative to it. */
function walk(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((p) => p.split('\\').join('/'))
}

/** The EAB HMAC key of an external ACME CA, configured from a file as the README shows. */
function configureAcmeIssuer(env: NodeJS.ProcessEnv, dataDir: string): string {
  const hmac = randomBytes(32).toString('base64url')
  const file = join(base, `eab-${randomBytes(4).toString('hex')}`)
  writeFileSync(file, hmac, { mode: 0o600 })
  const r = certdesk(
    env,
    'admin',
    '--data-dir',
    dataDir,
    'acme-issuer',
    'set',
    '--directory',
    'https://acme.example.test/directory',
    '--eab-kid',
    'kid-1',
    '--eab-hmac-file',
    file
  )
  expect(r.status, r.stderr).toBe(0)
  rmSync(file)
  return hmac
}

const eabInKeychain = (env: NodeJS.ProcessEnv, dataDir: string): unknown =>
  (
    json(certdesk(env, 'admin', '--data-dir', dataDir, 'acme-issuer', 'show').stdout).acme_issuer as Record<
      string,
      unknown
    >
  ).eab_hmac_key_in_keychain

/** The old layout: a gnome-keyring in `<data dir>/keyring` holding the CA key and an EAB key. */
async function formerLayout(dataDir: string, password: string): Promise<{ rootPem: string; hmac: string }> {
  const session = await startKeyringSession({ home: join(dataDir, 'keyring'), password })
  try {
    const env = { ...machine('former-maker'), ...session.env }
    const root = certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(root.status, root.stderr).toBe(0)
    const hmac = configureAcmeIssuer(env, dataDir)
    return { rootPem: json(root.stdout).root_pem as string, hmac }
  } finally {
    session.stop()
  }
}

/** Waits for a line a child prints on stdout; rejects if it exits first. */
function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    const timer = setTimeout(
      () => reject(new Error(`${what} printed nothing matching ${pattern} in 90 s: ${err}`)),
      90_000
    )
    child.stderr?.on('data', (d) => (err += d))
    child.stdout?.on('data', (d) => {
      out += d
      const m = pattern.exec(out)
      if (m) {
        clearTimeout(timer)
        resolve(m)
      }
    })
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}: ${err}`)))
  })
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.on('exit', (code) => resolve(code))
  })
}

describe('the OS keychain without a desktop session', () => {
  it('keeps secrets outside the data dir across commands, and a command next to serve joins its keyring', async () => {
    const env = machine('serve-host')
    const dataDir = join(base, 'serve-data')
    const first = certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(first.status, first.stderr).toBe(0)
    const loc = keyringLocation(dataDir, env)
    expect(loc.dir.startsWith(join(env.HOME as string, '.local', 'share', 'certdesk', 'keyrings'))).toBe(true)
    expect(first.stderr).toContain(
      `private gnome-keyring in ${loc.dir}, unlocked by the password in ${loc.generatedPasswordFile}`
    )
    expect(first.stdout).toMatch(/BEGIN CERTIFICATE/)
    expect(mode(loc.dir)).toBe('700')
    expect(mode(loc.generatedPasswordFile)).toBe('600')
    expect(readFileSync(loc.generatedPasswordFile, 'utf8').trim()).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(walk(dataDir).filter((p) => /keyring|password|session/.test(p))).toEqual([])
    // The CA's wrapping key came back from the same keyring files in a new process.
    expect(certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root').stdout).toBe(first.stdout)

    const serve = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--acme-port', '0'], {
      env: engineEnv(dataDir, env),
      stdio: ['ignore', 'pipe', 'pipe']
    })
    cleanups.push(stopChild(serve))
    const exited = exitOf(serve)
    await waitFor(serve, /listening on/, 'serve')
    const sessionFile = join(loc.dir, 'session.json')
    const running = readFileSync(sessionFile, 'utf8')
    expect(
      certdesk(
        env,
        'admin',
        '--data-dir',
        dataDir,
        'reseller',
        'add',
        '--name',
        'Headless',
        '--email',
        'h@example.test'
      ).status
    ).toBe(0)
    const key = certdesk(env, 'admin', '--data-dir', dataDir, 'apikey', 'create', '--reseller', '1')
    expect(key.status, key.stderr).toBe(0)
    expect(json(key.stdout).api_key).toMatch(/^cdk_/)
    expect(certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root').stdout).toBe(first.stdout)
    // The commands joined serve's daemon instead of starting their own on the same files.
    expect(readFileSync(sessionFile, 'utf8')).toBe(running)
    serve.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(existsSync(sessionFile)).toBe(false)
  })

  it('a copy of the data dir alone unwraps no key, and holds neither the keyring nor its password', () => {
    const owner = machine('owner')
    const dataDir = join(base, 'owner-data')
    const root = certdesk(owner, 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(root.status, root.stderr).toBe(0)
    const hmac = configureAcmeIssuer(owner, dataDir)
    expect(eabInKeychain(owner, dataDir)).toBe(true)
    const password = readFileSync(keyringLocation(dataDir, owner).generatedPasswordFile, 'utf8').trim()

    // A backup: the data dir and nothing else, restored on another machine.
    const copy = join(base, 'restored-data')
    cpSync(dataDir, copy, { recursive: true })
    const files = walk(copy)
    expect(
      files.filter((p) => /(^|\/)keyring(\/|$)|\.keyring$|\.keystore$|(^|\/)password$|session\.json$/.test(p))
    ).toEqual([])
    for (const p of files) {
      const path = join(copy, p)
      if (!statSync(path).isFile()) continue
      const bytes = readFileSync(path)
      expect(bytes.includes(password), `${p} holds the keyring password`).toBe(false)
      expect(bytes.includes(hmac), `${p} holds the EAB HMAC key`).toBe(false)
    }

    const thief = machine('other-machine')
    const stolen = certdesk(thief, 'admin', '--data-dir', copy, 'ca', 'root')
    expect(stolen.status).toBe(1)
    expect(stolen.stdout).not.toMatch(/BEGIN CERTIFICATE/)
    expect(stolen.stderr).toContain('could not unlock the local CA: its wrapping key is missing from the OS keychain')
    expect(stolen.stderr).toMatch(/already holds a store, but its keyring is new/)
    expect(eabInKeychain(thief, copy)).toBe(false)
    // The owner's machine still opens its own data dir.
    expect(certdesk(owner, 'admin', '--data-dir', dataDir, 'ca', 'root').stdout).toBe(root.stdout)
  })

  it('moves a keyring of the old layout out of the data dir under a new random password', async () => {
    const dataDir = join(base, 'former-data')
    const before = await formerLayout(dataDir, 'certdesk')
    const env = machine('upgraded')
    const moved = certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(moved.status, moved.stderr).toBe(0)
    expect(moved.stderr).toMatch(/moved \d+ keychain entries out of the data dir/)
    expect(json(moved.stdout).root_pem).toBe(before.rootPem)
    expect(existsSync(join(dataDir, 'keyring'))).toBe(false)
    expect(eabInKeychain(env, dataDir)).toBe(true)

    const loc = keyringLocation(dataDir, env)
    expect(mode(loc.generatedPasswordFile)).toBe('600')
    expect(readFileSync(loc.generatedPasswordFile, 'utf8').trim()).not.toBe('certdesk')
    // The former default password opens nothing in the moved keyring.
    const guess = await startKeyringSession({ home: loc.dir, password: 'certdesk' })
    try {
      const r = certdesk({ ...env, ...guess.env }, 'admin', '--data-dir', dataDir, 'ca', 'root')
      expect(r.status).toBe(1)
      expect(r.stderr).toMatch(/OS keychain/)
    } finally {
      guess.stop()
    }
    expect(json(certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root').stdout).root_pem).toBe(before.rootPem)
  })

  it('asks for the password an old keyring was made with, and keeps a password the user gives', async () => {
    const dataDir = join(base, 'former-own-password')
    const before = await formerLayout(dataDir, 'my own keyring password')
    const refused = certdesk(machine('upgraded-2'), 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain(
      'run this again with CERTDESK_KEYRING_PASSWORD set to the password it was made with'
    )
    expect(existsSync(join(dataDir, 'keyring', 'data', 'keyrings'))).toBe(true)

    const env = machine('upgraded-2', { CERTDESK_KEYRING_PASSWORD: 'my own keyring password' })
    const moved = certdesk(env, 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(moved.status, moved.stderr).toBe(0)
    expect(json(moved.stdout).root_pem).toBe(before.rootPem)
    expect(existsSync(join(dataDir, 'keyring'))).toBe(false)
    expect(existsSync(keyringLocation(dataDir, env).generatedPasswordFile)).toBe(false)
    expect(eabInKeychain(env, dataDir)).toBe(true)
  })

  it('leaves an old keyring alone while an older CertDesk process still uses it', async () => {
    const dataDir = join(base, 'former-in-use')
    await formerLayout(dataDir, 'certdesk')
    const old = await startKeyringSession({ home: join(dataDir, 'keyring'), password: 'certdesk' })
    cleanups.push(() => old.stop())
    writeFileSync(join(dataDir, 'keyring', 'session.json'), JSON.stringify(old.env))
    const r = certdesk(machine('upgraded-3'), 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/an older CertDesk process still uses it; stop that process/)
    expect(existsSync(join(dataDir, 'keyring', 'data', 'keyrings'))).toBe(true)
    old.stop()
  })

  it('refuses a keyring or password file inside the data dir, and a password file others can read', () => {
    const env = machine('careful')
    const dataDir = join(base, 'careful-data')
    mkdirSync(dataDir)
    const inside = certdesk(
      { ...env, CERTDESK_KEYRING_DIR: join(dataDir, 'kr') },
      'admin',
      '--data-dir',
      dataDir,
      'ca',
      'root'
    )
    expect(inside.status).toBe(1)
    expect(inside.stderr).toMatch(/could not use the keyring in .*kr: it is inside the data dir/)
    // A symlink outside the data dir that leads into it is inside all the same.
    symlinkSync(dataDir, join(base, 'careful-link'))
    const linked = certdesk(
      env,
      'admin',
      '--data-dir',
      dataDir,
      '--keyring-dir',
      join(base, 'careful-link', 'kr'),
      'ca',
      'root'
    )
    expect(linked.status).toBe(1)
    expect(linked.stderr).toMatch(/it is inside the data dir/)
    writeFileSync(join(dataDir, 'pw'), 'a password', { mode: 0o600 })
    const pwInside = certdesk(
      env,
      'admin',
      '--data-dir',
      dataDir,
      '--keyring-password-file',
      join(dataDir, 'pw'),
      'ca',
      'root'
    )
    expect(pwInside.status).toBe(1)
    expect(pwInside.stderr).toMatch(/could not use the keyring password file .*pw: it is inside the data dir/)
    expect(readdirSync(dataDir)).toEqual(['pw'])

    const pwFile = join(base, 'careful-password')
    writeFileSync(pwFile, 'correct horse battery staple\n')
    chmodSync(pwFile, 0o644)
    const loose = certdesk(env, 'admin', '--data-dir', dataDir, `--keyring-password-file=${pwFile}`, 'ca', 'root')
    expect(loose.status).toBe(1)
    expect(loose.stderr).toContain(`others may read or change it (mode 0644); run chmod 600 "${pwFile}"`)
    chmodSync(pwFile, 0o600)
    const own = certdesk(env, 'admin', '--data-dir', dataDir, '--keyring-password-file', pwFile, 'ca', 'root')
    expect(own.status, own.stderr).toBe(0)
    expect(existsSync(keyringLocation(dataDir, env).generatedPasswordFile)).toBe(false)
    const withFile = certdesk(
      { ...env, CERTDESK_KEYRING_PASSWORD_FILE: pwFile },
      'admin',
      '--data-dir',
      dataDir,
      'ca',
      'root'
    )
    expect(withFile.stdout).toBe(own.stdout)

    const wrong = certdesk(
      { ...env, CERTDESK_KEYRING_PASSWORD: 'not it' },
      'admin',
      '--data-dir',
      dataDir,
      'ca',
      'root'
    )
    expect(wrong.status).toBe(1)
    expect(wrong.stderr).toContain('the password from CERTDESK_KEYRING_PASSWORD does not open it')
    const empty = certdesk({ ...env, CERTDESK_KEYRING_PASSWORD: '' }, 'admin', '--data-dir', dataDir, 'ca', 'root')
    expect(empty.status).toBe(1)
    expect(empty.stderr).toContain('CERTDESK_KEYRING_PASSWORD is empty')
  })

  it('npm start in browser mode, then npx certdesk admin apikey create in another shell', async () => {
    const env = machine('npm-start')
    const dataDir = join(base, 'npm-start-data')
    const start = spawn(
      process.execPath,
      [join(ROOT, 'scripts', 'start.mjs'), '--data-dir', dataDir, '--port', '0', '--acme-port', '0'],
      {
        env: engineEnv(dataDir, env),
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe']
      }
    )
    // start.mjs passes SIGTERM on to serve and stops its keyring on the way out.
    cleanups.push(stopChild(start))
    const exited = exitOf(start)
    const [, url] = await waitFor(start, /listening on (http:\/\/\S+)/, 'npm start')
    const loc = keyringLocation(dataDir, env)
    const running = readFileSync(join(loc.dir, 'session.json'), 'utf8')

    const key = certdesk(env, 'admin', '--data-dir', dataDir, 'apikey', 'create', '--reseller', '1')
    expect(key.status, key.stderr).toBe(0)
    const account = await fetch(`${url}/account`, { headers: { 'x-api-key': json(key.stdout).api_key as string } })
    expect(account.status).toBe(200)
    expect(readFileSync(join(loc.dir, 'session.json'), 'utf8')).toBe(running)
    start.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(existsSync(join(loc.dir, 'session.json'))).toBe(false)
    expect(relative(dataDir, loc.dir).startsWith('..')).toBe(true)
  }, 180_000)
})
