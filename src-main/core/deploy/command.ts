/**
 * A command target: a shell command run after the files are written (an nginx reload, a copy
 * to another host), the way certbot's --deploy-hook works. It gets the order and the file
 * paths in its environment, runs at most `timeoutSeconds`, and its output is kept.
 */
import { spawn } from 'node:child_process'
import type { VerifyEndpoint } from './verify'

/** Kept output per run: enough for a reload's error, small enough for SQLite. */
export const OUTPUT_LIMIT = 64 * 1024
export const DEFAULT_COMMAND_TIMEOUT_SECONDS = 60
export const MAX_COMMAND_TIMEOUT_SECONDS = 600

export interface CommandConfig {
  command: string
  timeoutSeconds: number
  cwd?: string
  /** Where the reloaded servers listen: checked over TLS to serve the new certificate (verify.ts). */
  verify?: VerifyEndpoint[]
}

export interface CommandResult {
  ok: boolean
  exitCode: number | null
  signal: string | null
  timedOut: boolean
  output: string
  summary: string
}

export function runCommand(config: CommandConfig, env: Record<string, string>): Promise<CommandResult> {
  return new Promise((resolve) => {
    let output = ''
    let truncated = false
    const keep = (chunk: Buffer): void => {
      if (output.length >= OUTPUT_LIMIT) {
        truncated = true
        return
      }
      output += chunk.toString('utf8')
      if (output.length > OUTPUT_LIMIT) {
        output = output.slice(0, OUTPUT_LIMIT)
        truncated = true
      }
    }
    const windows = process.platform === 'win32'
    // Its own process group, so a time-out stops the shell and everything it started.
    const child = spawn(
      windows ? 'cmd.exe' : '/bin/sh',
      windows ? ['/d', '/s', '/c', config.command] : ['-c', config.command],
      {
        cwd: config.cwd,
        env: { ...inheritedEnv(), ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: !windows,
        windowsHide: true
      }
    )
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        if (!windows && child.pid) process.kill(-child.pid, 'SIGKILL')
        else child.kill('SIGKILL')
      } catch {
        // already gone
      }
    }, config.timeoutSeconds * 1000)
    const finish = (exitCode: number | null, signal: string | null, spawnError?: Error): void => {
      clearTimeout(timer)
      if (truncated) output += `\n[output truncated at ${OUTPUT_LIMIT} bytes]`
      const ok = !spawnError && !timedOut && exitCode === 0
      const summary = spawnError
        ? `could not run command: ${spawnError.message}`
        : timedOut
          ? `command stopped after its time limit of ${config.timeoutSeconds} s`
          : exitCode === 0
            ? 'command exited with 0'
            : signal
              ? `command was killed by ${signal}`
              : `command exited with ${exitCode}`
      resolve({ ok, exitCode, signal, timedOut, output, summary })
    }
    child.on('error', (err) => finish(null, null, err))
    child.on('close', (code, signal) => finish(code, signal))
  })
}

/**
 * The environment a command inherits: CertDesk's own variables are dropped, because one of them
 * unlocks the keychain (CERTDESK_KEYRING_PASSWORD, docs/security.md "Headless Linux") and a
 * command's output is kept in SQLite, where no secret may go.
 */
function inheritedEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toUpperCase().startsWith('CERTDESK_')))
}
