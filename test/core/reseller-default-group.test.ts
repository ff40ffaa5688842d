/** A reseller created without a group joins the default group, so it can see prices and order at once. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DEFAULT_GROUP_ID, groupForNewReseller } from '../../src-main/core/billing/resellers'
import { type Service } from '../../src-main/core/service'
import { openService } from '../support/engine'

let dataDir: string
let service: Service

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'certdesk-group-'))
  service = await openService({ dataDir })
})
afterAll(async () => {
  await service?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the default group of a new reseller', () => {
  it('is group 1 when none is given, none when null is asked for, and the one asked for otherwise', () => {
    expect(DEFAULT_GROUP_ID).toBe(1)
    expect(groupForNewReseller(undefined)).toBe(1)
    expect(groupForNewReseller(null)).toBeNull()
    expect(groupForNewReseller(2)).toBe(2)
  })

  it('applies to every caller of the core', async () => {
    const plain = await service.resellers.create({ name: 'Plain', email: 'plain@example.test' })
    expect(plain.groupId).toBe(DEFAULT_GROUP_ID)
    // It sees the catalogue at its group's prices.
    expect((await service.catalogue.list(plain.groupId, {})).length).toBeGreaterThan(0)
    const none = await service.resellers.create({ name: 'None', email: 'none@example.test', groupId: null })
    expect(none.groupId).toBeNull()
    await expect(service.resellers.create({ name: 'Bad', email: 'bad@example.test', groupId: 999 })).rejects.toThrow()
  })
})
