/**
 * Named points where the fault tests kill the process (`kill -9` from inside), to prove that a
 * crash between two steps of an operation leaves the store and the files consistent.
 *
 * Test-only: the points are armed only by `CERTDESK_CRASH_AT=<name>[,<name>…]` in the
 * environment, read once when the process starts; unarmed, `crashPoint` is one Set lookup on an
 * empty set. Points (docs/backup.md lists them):
 *   issuance:signed         a certificate is signed but not yet stored
 *   deploy:between-files    a deploy has written some of a target's files but not all
 *   deploy:restored         a failed reload put the previous files back, its attempt not yet recorded
 */
const armed = new Set(
  (process.env.CERTDESK_CRASH_AT ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
)

/** Ends the process at once, as a power cut or `kill -9` would, when `name` is armed. */
export function crashPoint(name: string): void {
  if (armed.size === 0 || !armed.has(name)) return
  process.kill(process.pid, 'SIGKILL')
}
