// Reads or writes keychain entries for the keyring move in keyring-session.mjs, in a process of
// its own so that it talks to exactly one D-Bus session (the one in its environment).
//   node keyring-items.mjs read   < [{ service, username }]            > [{ service, username, password|null }]
//   node keyring-items.mjs write  < [{ service, username, password }]
// The secrets travel over stdin and stdout only, never on the command line or in a file.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

const { Entry } = createRequire(import.meta.url)('@napi-rs/keyring')
const mode = process.argv[2]
const entries = JSON.parse(readFileSync(0, 'utf8'))

if (mode === 'read') {
  const out = entries.map(({ service, username }) => ({
    service,
    username,
    password: new Entry(service, username).getPassword() ?? null
  }))
  process.stdout.write(JSON.stringify(out))
} else if (mode === 'write') {
  for (const { service, username, password } of entries) new Entry(service, username).setPassword(password)
  process.stdout.write('[]')
} else {
  process.stderr.write('usage: keyring-items.mjs read|write < entries.json\n')
  process.exit(2)
}
