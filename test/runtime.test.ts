/**
 * The one start-up and shut-down routine of `certdesk serve` and the Electron window, run in
 * this process: what it starts, what it reports, and that stop() leaves no port open and the
 * store closed. (`certdesk serve` over it is tested end to end in test/cli.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startCertDesk, type RuntimeLog } from '../src-main/runtime'
import { onEngine } from './support/engine'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const dataDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'certdesk-runtime-'))
  dirs.push(d)
  return d
}
const collect = (): RuntimeLog & { lines: string[] } => {
  const lines: string[] = []
  return { lines, info: (l) => lines.push(`info ${l}`), error: (l) => lines.push(`error ${l}`) }
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })

const portOf = (url: string): number => Number(new URL(url).port)

async function occupiedPort(): Promise<{ port: number; server: Server }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as { port: number }).port, server }
}

describe('startCertDesk', () => {
  it('starts the API, the ACME server and browser mode on free ports, and stop() closes them all and the store', async () => {
    const log = collect()
    const running = await startCertDesk({ ...onEngine(dataDir()), port: 0, demo: true, browserUi: {}, log })
    const { urls, service } = running
    expect(running.demoReseller).toMatchObject({ name: 'Demo Reseller', creditBalance: 1000_00 })
    expect(urls.api).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(urls.acmeDirectory).toMatch(/^https:\/\/localhost:\d+\/acme\/directory$/)
    expect(urls.browserLogin).toMatch(new RegExp(`^${urls.api}/ui/login\\?token=[A-Za-z0-9_-]{43}$`))
    expect(portOf(urls.acmeDirectory!)).not.toBe(portOf(urls.api))

    const key = (await service.resellers.createApiKey(running.demoReseller!.id)).key
    const balance = await fetch(`${urls.api}/balance`, { headers: { 'x-api-key': key } })
    expect(await balance.json()).toMatchObject({ success: true, balance: 1000 })
    expect((await fetch(urls.browserLogin!, { redirect: 'manual' })).status).toBe(303)
    expect(await accepts(portOf(urls.acmeDirectory!))).toBe(true)

    const stopping = running.stop()
    expect(running.stop()).toBe(stopping)
    await stopping
    expect(await accepts(portOf(urls.api))).toBe(false)
    expect(await accepts(portOf(urls.acmeDirectory!))).toBe(false)
    await expect(service.resellers.list()).rejects.toThrow('could not use the store: it is closed')
    expect(log.lines.filter((l) => l.startsWith('error'))).toEqual([])
  })

  it('keeps the API serving when the ACME port is taken, and logs why', async () => {
    const taken = await occupiedPort()
    try {
      const log = collect()
      const running = await startCertDesk({ ...onEngine(dataDir()), port: 0, acmePort: taken.port, log })
      try {
        expect(running.urls.acmeDirectory).toBeNull()
        expect(log.lines).toContainEqual(
          expect.stringMatching(
            new RegExp(`^error could not start the ACME server on port ${taken.port}: .*EADDRINUSE`)
          )
        )
        expect((await fetch(`${running.urls.api}/balance`)).status).toBe(401)
      } finally {
        await running.stop()
      }
    } finally {
      taken.server.close()
    }
  })

  it('fails to start when the API port is taken, and starts on the same data dir once it is free', async () => {
    const taken = await occupiedPort()
    const dir = dataDir()
    try {
      await expect(startCertDesk({ ...onEngine(dir), port: taken.port, acmePort: 0, log: collect() })).rejects.toThrow(
        /EADDRINUSE/
      )
    } finally {
      taken.server.close()
    }
    const again = await startCertDesk({ ...onEngine(dir), port: 0, log: collect() })
    await again.stop()
  })
})
