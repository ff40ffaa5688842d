/**
 * Runs a generated command line through a real POSIX shell with the programs it calls replaced
 * by printers, and answers the argument vector each invocation received, so a test can check
 * what a pasted command would really hand to certbot, lego, acme.sh, curl or npx.
 */
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Invocation {
  program: string
  args: string[]
  /** The client variables a command line sets before the program, as the program saw them. */
  env: Record<string, string>
}

/** POSIX sh (dash on Debian) and bash, the shells users paste into; zsh too where installed. */
export const SHELLS = ['/bin/sh', '/bin/bash', '/usr/bin/zsh'].filter(existsSync)
const PROGRAMS = ['certbot', 'lego', 'acme.sh', 'curl', 'npx']
const CLIENT_ENV = ['REQUESTS_CA_BUNDLE', 'LEGO_CA_CERTIFICATES']

// Each record: the argument count, the program name, the arguments, then the client variables
// ("set:" + value, or empty when unset), every field ended by NUL (which no argument can hold).
const PRINTER = `#!/bin/sh
{
  printf '%s\\0' "$#" "\${0##*/}" "$@"
${CLIENT_ENV.map((v) => `  printf '%s\\0' "\${${v}+set:\${${v}}}"`).join('\n')}
} >> "$ARGV_OUT"
`

/**
 * Runs `command` with `shell -c` in a scratch folder (the working directory, so a stray
 * redirection or `touch` lands there and `leftovers` shows it).
 */
export function runThroughShell(
  shell: string,
  command: string
): { invocations: Invocation[]; status: number | null; stderr: string; leftovers: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'certdesk-argv-'))
  try {
    const bin = join(dir, 'bin')
    const work = join(dir, 'work')
    spawnSync('mkdir', ['-p', bin, work])
    for (const p of PROGRAMS) {
      writeFileSync(join(bin, p), PRINTER)
      chmodSync(join(bin, p), 0o755)
    }
    const out = join(dir, 'argv.out')
    writeFileSync(out, '')
    const env: NodeJS.ProcessEnv = { PATH: `${bin}:/usr/bin:/bin`, ARGV_OUT: out, HOME: work, LANG: 'C.UTF-8' }
    const r = spawnSync(shell, ['-c', command], { cwd: work, env, encoding: 'utf8', timeout: 20_000 })
    const fields = readFileSync(out, 'utf8').split('\0')
    fields.pop()
    const invocations: Invocation[] = []
    for (let i = 0; i < fields.length;) {
      const n = Number(fields[i])
      const program = fields[i + 1]
      const args = fields.slice(i + 2, i + 2 + n)
      const vars = fields.slice(i + 2 + n, i + 2 + n + CLIENT_ENV.length)
      const envSeen: Record<string, string> = {}
      CLIENT_ENV.forEach((name, k) => {
        if (vars[k].startsWith('set:')) envSeen[name] = vars[k].slice(4)
      })
      invocations.push({ program, args, env: envSeen })
      i += 2 + n + CLIENT_ENV.length
    }
    const leftovers = spawnSync('ls', ['-A', work], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean)
    return { invocations, status: r.status, stderr: r.stderr, leftovers }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The text of every `<pre>` block of an HTML page, with the page's escaping undone. */
export function preBlocks(html: string): string[] {
  return [...html.matchAll(/<pre>([\s\S]*?)<\/pre>/g)].map((m) =>
    m[1]
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
  )
}
