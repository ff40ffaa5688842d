/**
 * Deploy targets of an order: a folder the certificate files are written to, a command run after
 * them, a webhook told about each certificate. Their settings are checked on the way in; their
 * secrets (webhook signing secret, PFX password) live only in the OS keychain.
 */
import { randomBytes } from 'node:crypto'
import { isAbsolute, join } from 'node:path'
import type { CoreContext } from '../context'
import { invalid, notFound } from '../errors'
import { isoTimestamp } from '../time'
import { DEFAULT_COMMAND_TIMEOUT_SECONDS, MAX_COMMAND_TIMEOUT_SECONDS, type CommandConfig } from './command'
import { FOLDER_LAYOUTS, haproxyKeyPath, type FolderConfig, type FolderLayout } from './folder'
import { MAX_VERIFY_ENDPOINTS, parseEndpoint, type VerifyEndpoint } from './verify'
import { validateWebhookUrl, type WebhookConfig } from './webhook'
import type { Store } from '../store'

export const TARGET_KINDS = ['folder', 'command', 'webhook'] as const
export type TargetKind = (typeof TARGET_KINDS)[number]

export type TargetInput =
  | { kind: 'folder'; path: string; layout?: FolderLayout; pfx?: boolean; keyFile?: string }
  | { kind: 'command'; command: string; timeoutSeconds?: number; cwd?: string; verify?: string[] }
  | { kind: 'webhook'; url: string; secret?: string }

export type TargetConfig = FolderConfig | CommandConfig | WebhookConfig

export interface DeployTarget {
  id: number
  orderId: number
  kind: TargetKind
  config: TargetConfig
  createdAt: string
  removedAt: string | null
}

export interface CreatedTarget {
  target: DeployTarget
  /** Shown once: the webhook secret or the PFX password CertDesk created in the keychain. */
  secret: { name: 'webhook_secret' | 'pfx_password'; value: string } | null
}

export interface TargetRow {
  id: number
  order_id: number
  kind: TargetKind
  config: string
  created_at: string
  removed_at: string | null
}

/** The order a target or run belongs to, as the deploys name it. */
export interface OrderInfo {
  id: number
  reseller_id: number
  order_number: string
  domain: string
}

export const secretName = (targetId: number, kind: 'webhook_secret' | 'pfx_password'): string =>
  `deploy-target-${targetId}-${kind === 'webhook_secret' ? 'webhook-secret' : 'pfx-password'}`

export async function deployOrder(db: Store, orderId: number): Promise<OrderInfo> {
  const row = (await db.get('SELECT id, reseller_id, order_number, domain FROM orders WHERE id = ?', orderId)) as
    OrderInfo | undefined
  if (!row) throw notFound(`order ${orderId} not found`)
  return row
}

export async function addTarget(ctx: CoreContext, orderId: number, input: TargetInput): Promise<CreatedTarget> {
  const order = await deployOrder(ctx.store, orderId)
  const db = ctx.store
  const now = isoTimestamp(ctx.clock())
  const { config, secret } = checkTarget(input)
  // Removed until its secret is kept: no deploy reads a target without it.
  const id = await db.insert(
    'INSERT INTO deploy_targets (order_id, kind, config, created_at, removed_at) VALUES (?, ?, ?, ?, ?)',
    order.id,
    input.kind,
    JSON.stringify(config),
    now,
    secret ? now : null
  )
  if (secret) {
    // After the row is committed (a transaction may run twice, a keychain write must not); if
    // the keychain refuses, the target is not created either.
    try {
      await ctx.secrets.set(secretName(id, secret.name), secret.value)
    } catch (err) {
      await db.run('DELETE FROM deploy_targets WHERE id = ?', id)
      throw err
    }
    await db.run('UPDATE deploy_targets SET removed_at = NULL WHERE id = ?', id)
  }
  return { target: await readTarget(db, id), secret }
}

export async function listTargets(db: Store, orderId: number, includeRemoved = false): Promise<DeployTarget[]> {
  await deployOrder(db, orderId)
  const rows = (await db.all(
    `SELECT * FROM deploy_targets WHERE order_id = ? ${includeRemoved ? '' : 'AND removed_at IS NULL'} ORDER BY id`,
    orderId
  )) as TargetRow[]
  return rows.map(toTarget)
}

/** The folder targets in use of an order, oldest first (a command's files and folders). */
export async function folderTargets(db: Store, orderId: number): Promise<FolderConfig[]> {
  return (
    (await db.all(
      `SELECT * FROM deploy_targets WHERE order_id = ? AND kind = 'folder' AND removed_at IS NULL ORDER BY id`,
      orderId
    )) as TargetRow[]
  ).map((r) => JSON.parse(r.config) as FolderConfig)
}

export async function readTarget(db: Store, targetId: number): Promise<DeployTarget> {
  const row = (await db.get('SELECT * FROM deploy_targets WHERE id = ?', targetId)) as TargetRow | undefined
  if (!row) throw notFound(`deploy target ${targetId} not found`)
  return toTarget(row)
}

/** Stops using a target and deletes its secrets; its runs and attempts stay as history. */
export async function removeTarget(ctx: CoreContext, targetId: number): Promise<DeployTarget> {
  const db = ctx.store
  const t = await readTarget(db, targetId)
  if (t.removedAt) throw notFound(`deploy target ${targetId} not found`)
  const now = isoTimestamp(ctx.clock())
  await db.tx(async () => {
    await db.run('UPDATE deploy_targets SET removed_at = ? WHERE id = ?', now, targetId)
    await db.run(
      `UPDATE deploy_runs SET status = 'superseded', last_error = 'target removed', next_attempt_at = NULL, updated_at = ?
       WHERE target_id = ? AND status IN ('pending', 'running')`,
      now,
      targetId
    )
  })
  for (const name of ['webhook_secret', 'pfx_password'] as const) {
    if ((await ctx.secrets.get(secretName(targetId, name))) !== null)
      await ctx.secrets.delete(secretName(targetId, name))
  }
  return await readTarget(db, targetId)
}

/** The webhook secret or PFX password, for the desktop user to copy again. */
export async function revealSecret(ctx: CoreContext, targetId: number): Promise<string | null> {
  const t = await readTarget(ctx.store, targetId)
  if (t.kind === 'webhook') return await ctx.secrets.get(secretName(targetId, 'webhook_secret'))
  if (t.kind === 'folder') return await ctx.secrets.get(secretName(targetId, 'pfx_password'))
  return null
}

/** The admin's description of a target (stored event messages, never shown to a reseller). */
export function describeTarget(t: DeployTarget): string {
  if (t.kind === 'folder') return `folder ${(t.config as FolderConfig).path}`
  if (t.kind === 'command') return `command target ${t.id}`
  return `webhook ${(t.config as WebhookConfig).url}`
}

function checkTarget(input: TargetInput): { config: TargetConfig; secret: CreatedTarget['secret'] } {
  switch (input.kind) {
    case 'folder': {
      const path = checkPath(input.path, 'path', 'folder')
      const layout = input.layout ?? 'nginx'
      if (!FOLDER_LAYOUTS.includes(layout))
        throw invalid(`could not add folder target: layout must be one of ${FOLDER_LAYOUTS.join(', ')}`)
      const pfx = Boolean(input.pfx) || layout === 'iis'
      const keyFile = checkKeyFile(input.keyFile, path, layout)
      return {
        config: { path, layout, pfx, ...(keyFile ? { keyFile } : {}) },
        secret: pfx ? { name: 'pfx_password', value: randomBytes(18).toString('base64url') } : null
      }
    }
    case 'command': {
      const command = input.command?.trim()
      if (!command) throw invalid('could not add command target: command is empty')
      if (command.length > 4096) throw invalid('could not add command target: command is longer than 4096 characters')
      const timeoutSeconds = input.timeoutSeconds ?? DEFAULT_COMMAND_TIMEOUT_SECONDS
      if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > MAX_COMMAND_TIMEOUT_SECONDS) {
        throw invalid(`could not add command target: timeout must be 1 to ${MAX_COMMAND_TIMEOUT_SECONDS} seconds`)
      }
      if (input.cwd !== undefined && !isAbsolute(input.cwd))
        throw invalid('could not add command target: cwd must be an absolute path')
      const verify = checkVerify(input.verify)
      return {
        config: {
          command,
          timeoutSeconds,
          ...(input.cwd ? { cwd: input.cwd } : {}),
          ...(verify.length ? { verify } : {})
        },
        secret: null
      }
    }
    case 'webhook': {
      const problem = validateWebhookUrl(input.url ?? '')
      if (problem) throw invalid(`could not add webhook target: url ${problem}`)
      if (input.secret !== undefined && input.secret.length < 16)
        throw invalid('could not add webhook target: a secret needs at least 16 characters')
      return {
        config: { url: input.url },
        secret: { name: 'webhook_secret', value: input.secret ?? `whsec_${randomBytes(32).toString('base64url')}` }
      }
    }
    default:
      throw invalid(`could not add deploy target: kind must be one of ${TARGET_KINDS.join(', ')}`)
  }
}

/**
 * An absolute path without `.` or `..` segments or control characters: what the admin typed is
 * where the files go, never somewhere a relative segment leads.
 */
function checkPath(value: unknown, what: 'path' | 'key file', kind: string): string {
  const path = typeof value === 'string' ? value.trim() : ''
  const fail = (why: string): never => {
    throw invalid(`could not add ${kind} target: ${what} ${why}`)
  }
  if (!path || !isAbsolute(path)) fail(`must be an absolute ${what === 'path' ? 'folder' : 'file'} path`)
  if (path.length > 4096) fail('is longer than 4096 characters')
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) fail('must not contain control characters')
  if (path.split(/[\\/]/).some((seg) => seg === '..' || seg === '.')) fail('must not contain . or .. segments')
  return path
}

/** Names CertDesk writes in a folder; a key file there would be overwritten by the certificate. */
const WRITTEN_NAMES = ['cert.pem', 'chain.pem', 'fullchain.pem', 'haproxy.pem', 'certificate.pfx']

function checkKeyFile(value: string | undefined, folder: string, layout: FolderLayout): string | null {
  if (value === undefined || value.trim() === '') return null
  const keyFile = checkPath(value, 'key file', 'folder')
  if (WRITTEN_NAMES.some((n) => join(folder, n) === keyFile))
    throw invalid('could not add folder target: the key file is one of the files CertDesk writes in the folder')
  // HAProxy finds a key kept apart from the certificate only as `<crt>.key` (ssl-load-extra-files).
  if (layout === 'haproxy' && keyFile !== haproxyKeyPath(folder))
    throw invalid(
      `could not add folder target: HAProxy reads a separate key only from ${haproxyKeyPath(folder)} (the crt file name plus .key); keep the key there and name that path`
    )
  return keyFile
}

function checkVerify(value: string[] | undefined): VerifyEndpoint[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) throw invalid('could not add command target: verify must be a list of host:port')
  const list = value.map((v) => String(v).trim()).filter(Boolean)
  if (list.length > MAX_VERIFY_ENDPOINTS)
    throw invalid(`could not add command target: at most ${MAX_VERIFY_ENDPOINTS} servers to verify`)
  return list.map((text) => {
    const e = parseEndpoint(text)
    if (typeof e === 'string') throw invalid(`could not add command target: verify ${e}`)
    return e
  })
}

/**
 * Changes the key file of a folder target or the servers a command target verifies; the
 * next deploy uses them. The values are checked as when the target is added.
 */
export async function updateTarget(
  ctx: CoreContext,
  targetId: number,
  change: { keyFile?: string | null; verify?: string[] }
): Promise<DeployTarget> {
  const t = await readTarget(ctx.store, targetId)
  if (t.removedAt) throw notFound(`deploy target ${targetId} not found`)
  let config: TargetConfig
  if (t.kind === 'folder' && change.keyFile !== undefined && change.verify === undefined) {
    const c = t.config as FolderConfig
    const keyFile = change.keyFile === null ? null : checkKeyFile(change.keyFile, c.path, c.layout)
    const { keyFile: _old, ...rest } = c
    config = { ...rest, ...(keyFile ? { keyFile } : {}) }
  } else if (t.kind === 'command' && change.verify !== undefined && change.keyFile === undefined) {
    const verify = checkVerify(change.verify)
    const { verify: _old, ...rest } = t.config as CommandConfig
    config = { ...rest, ...(verify.length ? { verify } : {}) }
  } else {
    throw invalid(
      'could not change deploy target: a folder target takes a key file, a command target the servers to verify'
    )
  }
  await ctx.store.run('UPDATE deploy_targets SET config = ? WHERE id = ?', JSON.stringify(config), targetId)
  return await readTarget(ctx.store, targetId)
}

function toTarget(r: TargetRow): DeployTarget {
  return {
    id: r.id,
    orderId: r.order_id,
    kind: r.kind,
    config: JSON.parse(r.config) as TargetConfig,
    createdAt: r.created_at,
    removedAt: r.removed_at
  }
}
