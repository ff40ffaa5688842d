/**
 * The HAProxy of the team tests (test/support/haproxy.ts) balances for real and never outlives
 * the process that started it: a test process killed with SIGKILL takes HAProxy with it, and
 * its folder goes soon after.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startHaproxy } from '../support/haproxy'
import { ROOT } from '../support/offline-tool'

const servers: http.Server[] = []

async function named(name: string): Promise<number> {
  const s = http.createServer((_req, res) => res.end(name))
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))
  servers.push(s)
  return (s.address() as AddressInfo).port
}

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve))
})

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('HAProxy for the team tests', () => {
  it('sends requests in turn in HTTP mode and connections in turn in TCP mode', async () => {
    const backends = [
      { name: 'a', port: await named('a') },
      { name: 'b', port: await named('b') }
    ]
    const lb = await startHaproxy({ web: { mode: 'http', backends }, raw: { mode: 'tcp', backends } })
    try {
      await expect.poll(async () => Object.values(await lb.states('web'))).toEqual(['UP', 'UP'])
      const seen = new Set<string>()
      for (let i = 0; i < 6; i++) seen.add(await (await fetch(`http://127.0.0.1:${lb.ports.web}/`)).text())
      expect([...seen].sort()).toEqual(['a', 'b'])
      const served = await lb.served('web')
      expect(served.a + served.b).toBe(6)
      const viaTcp = new Set<string>()
      for (let i = 0; i < 4; i++)
        viaTcp.add(
          await (await fetch(`http://127.0.0.1:${lb.ports.raw}/`, { headers: { connection: 'close' } })).text()
        )
      expect([...viaTcp].sort()).toEqual(['a', 'b'])
    } finally {
      await lb.stop()
    }
    expect(existsSync(lb.dir)).toBe(false)
  })

  it('ends with the process that started it, even one killed with SIGKILL', async () => {
    const port = await named('c')
    const script = `
      const mod = await import(${JSON.stringify(join(ROOT, 'test', 'support', 'haproxy.ts'))})
      const { startHaproxy } = mod.startHaproxy ? mod : mod.default
      const lb = await startHaproxy({ web: { mode: 'http', backends: [{ name: 'c', port: ${port} }] } })
      process.stdout.write(JSON.stringify({ dir: lb.dir, port: lb.ports.web, pid: lb.pid }) + '\\n')
      setInterval(() => undefined, 1000)
    `
    // Node itself with tsx's loader (the tsx command would add a process of its own in between).
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit']
    })
    const info = await new Promise<{ dir: string; port: number; pid: number }>((resolve, reject) => {
      let out = ''
      child.stdout.on('data', (d) => {
        out += d
        if (out.includes('\n')) resolve(JSON.parse(out))
      })
      child.on('exit', (code) => reject(new Error(`the starter exited with ${code}`)))
    })
    expect(alive(info.pid)).toBe(true)
    expect(await (await fetch(`http://127.0.0.1:${info.port}/`)).text()).toBe('c')
    child.kill('SIGKILL')
    await expect.poll(() => alive(info.pid), { timeout: 10_000 }).toBe(false)
    await expect.poll(() => existsSync(info.dir), { timeout: 15_000 }).toBe(false)
  })
})
