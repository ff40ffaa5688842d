// `npm start`: set-up, then the Electron app where its binary and a display exist; otherwise
// the same app in browser mode (the core, the reseller API and the UI on 127.0.0.1).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { dataDirFromArgs, ensureKeyring, keyringOptionsFromArgs } from './keyring-session.mjs'
import { ELECTRON_NATIVE_DIR, electronBinary, root, setup } from './setup.mjs'

const log = (msg) => process.stderr.write(`start: ${msg}\n`)

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
    child = spawn(process.execPath, [join(root, 'bin', 'certdesk.cjs'), 'serve', '--demo', '--ui', ...args], {
      stdio: 'inherit',
      env
    })
  }
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig))
  child.on('exit', (code) => process.exit(code ?? 0))
}

main().catch((err) => {
  log(err.message)
  process.exit(1)
})
