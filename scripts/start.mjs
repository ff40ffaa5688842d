// `npm start`: set-up, then the Electron app where its binary and a display exist; otherwise
// the same app in browser mode (the core, the reseller API and the UI on 127.0.0.1).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { dataDirFromArgs, ensureKeyring, keyringOptionsFromArgs } from './keyring-session.mjs'
import { ELECTRON_NATIVE_DIR, electronBinary, root, setup } from './setup.mjs'

const log = (msg) => process.stderr.write(`start: ${msg}\n`)

/**
 * `serve` as `npm start` runs it without a window: the UI in browser mode, and on a new data dir
 * the demo reseller, so a person trying CertDesk can order at once (docs/decisions.md, "A new
 * data dir"). A headless `certdesk serve` for scripts starts with no reseller.
 */
export const browserModeArgs = (args) => ['serve', '--demo', '--ui', ...args]

const hasDisplay = () => process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY)

async function main() {
  await setup()
  const args = process.argv.slice(2)
  const env = { ...process.env }
  // A headless Linux machine has no session keyring: a private one outside the data dir, which
  // the certdesk command joins (docs/security.md, "Headless Linux").
  await ensureKeyring(dataDirFromArgs(args, env), env, keyringOptionsFromArgs(args))
  const electron = electronBinary()
  const nativeForElectron = existsSync(join(ELECTRON_NATIVE_DIR, 'better_sqlite3.node'))
  let child
  if (electron && nativeForElectron && hasDisplay()) {
    child = spawn(electron, [root, ...args], { stdio: 'inherit', env })
  } else {
    log(
      !electron
        ? 'no Electron binary on this machine: starting browser mode'
        : !nativeForElectron
          ? 'better-sqlite3 is not built for Electron here: starting browser mode'
          : 'no display: starting browser mode'
    )
    child = spawn(process.execPath, [join(root, 'bin', 'certdesk.cjs'), ...browserModeArgs(args)], {
      stdio: 'inherit',
      env
    })
  }
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig))
  child.on('exit', (code) => process.exit(code ?? 0))
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    log(err.message)
    process.exit(1)
  })
}
