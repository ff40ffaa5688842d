/**
 * `certdesk admin alerts …` as an admin's script uses it, against real receivers on loopback:
 * credentials go in through stdin or the environment (never an argument), the JSON out never
 * carries them, a test message arrives, and refusals exit 1 (core) or 2 (usage).
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startJsonSink, startMailSink, type JsonSink, type MailSink } from '../support/alert-sinks'
import { CLI } from '../support/cli'
import { engineEnv } from '../support/engine'

const dataDir = mkdtempSync(join(tmpdir(), 'certdesk-alerts-cli-'))
const PASSWORD = "s3cret-'$(touch pwned)'"
let mail: MailSink
let slack: JsonSink

/**
 * Runs `certdesk admin --data-dir D …` with `stdin` piped in; answers exit code, parsed JSON and
 * both streams. Asynchronous: the receivers run in this process and must answer meanwhile.
 */
async function admin(args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}) {
  const child = spawn(process.execPath, [CLI, 'admin', '--data-dir', dataDir, ...args], {
    env: engineEnv(dataDir, { ...process.env, ...opts.env }),
    stdio: ['pipe', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  child.stdin.end(opts.stdin ?? '')
  const timer = setTimeout(() => child.kill(), 60_000)
  const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? -1)))
  clearTimeout(timer)
  let json: Record<string, unknown> = {}
  try {
    json = JSON.parse(stdout || stderr) as Record<string, unknown>
  } catch {
    // usage errors print text
  }
  return { code, json, stdout, stderr }
}

beforeAll(async () => {
  ;[mail, slack] = await Promise.all([startMailSink('alerts', PASSWORD), startJsonSink('/services/T9/B9/clisecret')])
  expect((await admin(['settings', 'set', 'alerts.allow_private_addresses', 'true'])).code).toBe(0)
})
afterAll(async () => {
  await Promise.all([mail?.close(), slack?.close()])
  rmSync(dataDir, { recursive: true, force: true })
})

describe('certdesk admin alerts', () => {
  it('adds an email channel with the password from stdin and sends a test through the authenticated relay', async () => {
    const added = await admin(
      [
        'alerts',
        'add-email',
        '--name',
        'Ops',
        '--host',
        '127.0.0.1',
        '--port',
        String(mail.port),
        '--security',
        'none',
        '--user',
        'alerts',
        '--from',
        'certdesk@reseller.test',
        '--to',
        'ops@reseller.test,boss@reseller.test',
        '--digest'
      ],
      { stdin: `${PASSWORD}\n` }
    )
    expect(added.code).toBe(0)
    expect(added.json.channel).toMatchObject({ id: 1, kind: 'smtp', name: 'Ops', username: 'alerts', digest: true })
    expect(added.stdout).not.toContain('s3cret')
    const test = await admin(['alerts', 'test', '--channel', '1'])
    expect(test.code).toBe(0)
    expect(test.json.delivery).toMatchObject({ status: 'sent', attempts: 1, channelName: 'Ops' })
    expect(mail.messages).toHaveLength(1)
    expect(mail.messages[0]).toMatchObject({ user: 'alerts', subject: '[CertDesk] CertDesk test alert' })
    expect(mail.messages[0].to.sort()).toEqual(['boss@reseller.test', 'ops@reseller.test'])
  })

  it('takes a Slack URL only from stdin or the environment, and keeps it out of its output', async () => {
    const onArgs = await admin(['alerts', 'add-slack', '--name', 'Slack', '--url', slack.url])
    expect(onArgs.code).toBe(2)
    expect(onArgs.stderr).toMatch(/is a credential: give it in CERTDESK_ALERT_URL or on stdin/)
    const added = await admin(['alerts', 'add-slack', '--name', 'Slack'], { env: { CERTDESK_ALERT_URL: slack.url } })
    expect(added.code).toBe(0)
    expect(added.stdout).not.toContain('clisecret')
    expect((await admin(['alerts', 'test', '--channel', '2'])).code).toBe(0)
    expect(slack.bodies).toHaveLength(1)
    expect(slack.bodies[0].path).toBe('/services/T9/B9/clisecret')
    expect((await admin(['alerts', 'channels'])).stdout).not.toMatch(/clisecret|s3cret/)
  })

  it('answers a webhook signing secret once on creation and again on request', async () => {
    const added = await admin(['alerts', 'add-webhook', '--name', 'Tickets', '--url', 'http://127.0.0.1:9/hook'])
    expect(added.code).toBe(0)
    expect(added.json.signing_secret).toMatch(/^[0-9a-f]{64}$/)
    expect((await admin(['alerts', 'secret', '--channel', '3'])).json.signing_secret).toBe(added.json.signing_secret)
    expect((await admin(['alerts', 'secret', '--channel', '1'])).code).toBe(1)
  })

  it('changes a rule, refuses a bad one with exit 1, and lists the deliveries newest first', async () => {
    const changed = await admin(['alerts', 'rule', '--rule', 'validation_waiting', '--hours', '12'])
    expect(changed.json.rule).toMatchObject({ rule: 'validation_waiting', enabled: true, thresholdHours: 12 })
    const bad = await admin(['alerts', 'rule', '--rule', '../../etc/passwd', '--disable'])
    expect(bad.code).toBe(1)
    expect(bad.json.error).toMatch(/is not one of expiring, renewal_failed/)
    expect((await admin(['alerts', 'rule', '--rule', 'expiring', '--hours', '-1'])).code).toBe(2)
    const deliveries = await admin(['alerts', 'deliveries'])
    expect(deliveries.json.total).toBe(2)
    expect(
      (deliveries.json.items as { channelName: string; status: string }[]).map((d) => [d.channelName, d.status])
    ).toEqual([
      ['Slack', 'sent'],
      ['Ops', 'sent']
    ])
  })
})
