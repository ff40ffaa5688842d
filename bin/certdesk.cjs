#!/usr/bin/env node
'use strict'
// The `certdesk` command. It runs the built CLI (out/main/cli.js); `npm start`, `npm test` and
// `npm run setup` build it.
const { existsSync } = require('node:fs')
const { join } = require('node:path')

const cli = join(__dirname, '..', 'out', 'main', 'cli.js')
if (!existsSync(cli)) {
  process.stderr.write('certdesk: the app is not built yet; run `npm run setup` in the CertDesk folder first\n')
  process.exit(2)
}
const args = process.argv.slice(2)

async function run() {
  // Headless Linux: join or start CertDesk's private keyring for this data dir, kept outside
  // the data dir (docs/security.md, "Headless Linux"). A refusal (an unsafe set-up, a keyring that will not open)
  // stops the command with its message. A server key source (`--secrets file:…` or `systemd`,
  // docs/team-server.md) replaces the keychain: then no keyring is started at all.
  if (process.platform === 'linux' && !process.env.DBUS_SESSION_BUS_ADDRESS) {
    const { dataDirFromArgs, ensureKeyring, keyringOptionsFromArgs, usesServerSecrets } =
      await import('../scripts/keyring-session.mjs')
    if (!usesServerSecrets(args)) await ensureKeyring(dataDirFromArgs(args), process.env, keyringOptionsFromArgs(args))
  }
  return require(cli).main(args)
}

run()
  .then((code) => process.exit(code))
  .catch((err) => {
    process.stderr.write(`certdesk: ${err && err.message ? err.message : String(err)}\n`)
    process.exit(1)
  })
