/**
 * `certdesk admin admins …` and `certdesk admin audit list`: admin accounts of a team server
 * (the first owner comes from here) and the audit log. Whoever has this machine's shell and the
 * data dir owns the book, so these need no sign-in; they are audited like every admin command
 * (cli-audit.ts). A password is read from stdin or a silent prompt, never from the command line.
 */
import { commandKey, need, optionalInt, print, readSecretLine, UsageError, type Values } from './cli-args'
import { auditQuery, type AuditEntry } from './core/admins'
import type { Service } from './core/service'
import { ADMIN_ROLES, AUDIT_OUTCOMES } from '../src-shared/constants'
import type { AdminRole } from '../src-shared/admin-records'

export const ADMINS_USAGE = `  certdesk admin [--data-dir D] admins add --name N --role owner|operator|viewer
                 (the password from stdin or a prompt, never an argument)
  certdesk admin [--data-dir D] admins list
  certdesk admin [--data-dir D] admins set-role --name N --role owner|operator|viewer
  certdesk admin [--data-dir D] admins disable|enable --name N
  certdesk admin [--data-dir D] admins password --name N    (a new password, from stdin or a prompt)
  certdesk admin [--data-dir D] admins reset-totp --name N  (two-step sign-in off, for a lost device)
  certdesk admin [--data-dir D] audit list [--actor A] [--action M] [--outcome ${AUDIT_OUTCOMES.join('|')}]
                 [--since YYYY-MM-DD] [--limit N] [--offset N] [--json]`

export const isAdminsCommand = (noun: string | undefined): boolean => noun === 'admins' || noun === 'audit'

function role(v: Values): AdminRole {
  const r = need(v, 'role')
  if (!(ADMIN_ROLES as readonly string[]).includes(r))
    throw new UsageError(`--role must be one of ${ADMIN_ROLES.join(', ')}`)
  return r as AdminRole
}

async function newPassword(name: string): Promise<string> {
  const missing = 'no password: pipe it on stdin or run in a terminal'
  const first = await readSecretLine(`new password for ${name}: `, missing)
  // Typed at a prompt, it is asked twice; piped, the script's line is taken as it is.
  if (process.stdin.isTTY && (await readSecretLine('the same password again: ', missing)) !== first)
    throw new UsageError('the two passwords differ; nothing was changed')
  return first
}

export async function adminsAdmin(service: Service, words: string[], v: Values): Promise<number> {
  const accounts = service.admins.accounts
  switch (commandKey(words)) {
    case 'admins add': {
      const name = need(v, 'name')
      const r = role(v)
      const admin = await accounts.create({ name, role: r, password: await newPassword(name) })
      print({ success: true, admin })
      return 0
    }
    case 'admins list':
      print({ success: true, admins: accounts.list() })
      return 0
    case 'admins set-role':
      print({ success: true, admin: accounts.setRole(need(v, 'name'), role(v)) })
      return 0
    case 'admins disable':
    case 'admins enable':
      print({ success: true, admin: accounts.setEnabled(need(v, 'name'), words[1] === 'enable') })
      return 0
    case 'admins password': {
      const name = need(v, 'name')
      print({ success: true, admin: await accounts.setPassword(name, await newPassword(name)) })
      return 0
    }
    case 'admins reset-totp':
      print({ success: true, admin: accounts.resetTotp(need(v, 'name')) })
      return 0
    case 'audit list':
      return auditList(service, v)
    default:
      throw new UsageError(`unknown admin command: ${commandKey(words) || '(none)'}`)
  }
}

function auditList(service: Service, v: Values): number {
  const outcome = v.outcome
  if (outcome !== undefined && !(AUDIT_OUTCOMES as readonly string[]).includes(outcome))
    throw new UsageError(`--outcome must be one of ${AUDIT_OUTCOMES.join(', ')}`)
  const page = service.admins.audit.list(
    auditQuery({
      actor: v.actor,
      action: v.action,
      outcome: outcome as AuditEntry['outcome'] & string,
      since: v.since
    }),
    { limit: optionalInt(v, 'limit') ?? 50, offset: optionalInt(v, 'offset') ?? 0 }
  )
  if (v.json) {
    print({ success: true, entries: page.items, total: page.total, limit: page.limit, offset: page.offset })
    return 0
  }
  process.stdout.write(auditTable(page.items, page.total))
  return 0
}

/** The log as a person reads it in a terminal: one line per entry, newest first. */
export function auditTable(entries: readonly AuditEntry[], total: number): string {
  const rows = entries.map((e) => [
    e.at,
    e.actor + (e.role ? ` (${e.role})` : ''),
    e.source,
    e.action,
    Object.entries(e.targets)
      .map(([k, t]) => `${k}=${Array.isArray(t) ? t.join(',') : t}`)
      .join(' ') || '-',
    e.outcome === null ? 'no outcome (interrupted)' : `${e.outcome} ${e.status}`
  ])
  const head = ['when (UTC)', 'who', 'from', 'action', 'targets', 'outcome']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (r: string[]): string =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd()
  return [line(head), ...rows.map(line), `${entries.length} of ${total} entries`].join('\n') + '\n'
}
