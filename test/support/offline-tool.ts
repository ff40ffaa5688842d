/**
 * Runs a command-line tool from node_modules the way `npm test` does on a machine without a
 * network: under test/support/offline-guard.mjs, which refuses (and reports) any connection
 * or DNS lookup off this machine, with the tools' own telemetry and update checks turned off.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'

export const ROOT = join(__dirname, '..', '..')
const GUARD = join(__dirname, 'offline-guard.mjs')
export const OFFLINE_MARKER = 'OFFLINE-GUARD: refused'

export const offlineEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${GUARD}`.trim(),
  // Redocly CLI: no usage report, no "new version" check.
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_COLOR: '1'
})

export interface ToolRun {
  code: number | null
  stdout: string
  stderr: string
}

/** `node_modules/.bin/<bin> ...args`, offline, to its end. */
export function runTool(bin: string, args: string[], timeoutMs = 120_000): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'node_modules', '.bin', bin), args, { cwd: ROOT, env: offlineEnv() })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
