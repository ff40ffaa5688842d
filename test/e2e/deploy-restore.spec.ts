/**
 * A deploy whose reload fails says on the order page that the previous files were put back:
 * the command's run and the folder's both show "restored the previous files", and the folder
 * holds exactly what it held before.
 */
import { expect, test } from '@playwright/test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { folderSnapshot as snapshot } from '../deploy/web-servers'
import { dcvServersForFile, issueOverHttp, orderFromCatalogue, pointChecksAt, resetChecks, shot } from './support'

const servers = dcvServersForFile()
const work = mkdtempSync(join(tmpdir(), 'certdesk-e2e-restore-'))
test.afterAll(() => rmSync(work, { recursive: true, force: true }))

test('a failed reload puts the previous files back, and the page says so', async ({ page }) => {
  await pointChecksAt(page, servers.dns, servers.web)
  const domain = 'restore.example.test'
  const dir = join(work, domain)
  try {
    await orderFromCatalogue(page, domain)
    const card = page.getByTestId('deploy-targets')
    await card.getByLabel('Folder path').fill(dir)
    await card.getByLabel('Layout').selectOption('nginx')
    await card.getByRole('button', { name: 'Add target' }).click()
    await expect(card.locator('tr[data-target="folder"]')).toContainText(dir)
    await issueOverHttp(page, servers.web, [domain])
    const folderRun = card.locator('tr[data-target="folder"]').getByTestId('last-run')
    await expect(folderRun).toContainText('succeeded')
    const before = snapshot(dir)

    await card.getByLabel('Target kind').selectOption('command')
    await card.getByLabel('Command').fill('echo "nginx: [emerg] cannot load certificate" >&2; exit 1')
    await card.getByRole('button', { name: 'Add target' }).click()
    await card.getByRole('button', { name: 'Deploy now' }).click()
    const commandRun = card.locator('tr[data-target="command"]').getByTestId('last-run')
    await expect(commandRun).toContainText(`command exited with 1; restored the previous files in ${dir}`)
    await expect(folderRun).toContainText('restored the previous files: command target')
    await expect(card.getByTestId('deploy-runs')).toContainText('restored the previous files in')
    await card.scrollIntoViewIfNeeded()
    await shot(page, 'deploy-restored')
    expect(snapshot(dir)).toEqual(before)
  } finally {
    await resetChecks(page)
  }
})
