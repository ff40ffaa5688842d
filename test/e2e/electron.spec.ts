/**
 * The desktop window itself, where the Electron binary is installed. Offline installs skip the
 * binary download (see the README), so here the test says which file is missing and skips.
 */
import { _electron as electron, expect, test } from '@playwright/test'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(__dirname, '..', '..')

function electronBinary(): string | null {
  const pathTxt = join(ROOT, 'node_modules', 'electron', 'path.txt')
  if (!existsSync(pathTxt)) return null
  const bin = join(ROOT, 'node_modules', 'electron', 'dist', readFileSync(pathTxt, 'utf8').trim())
  return existsSync(bin) ? bin : null
}

test('the Electron window shows the dashboard over the IPC bridge, hardened', async () => {
  const bin = electronBinary()
  test.skip(
    !bin,
    'Electron binary missing: node_modules/electron/dist/electron is not installed on this machine (offline install with ELECTRON_SKIP_BINARY_DOWNLOAD=1)'
  )
  const userData = mkdtempSync(join(tmpdir(), 'certdesk-electron-'))
  const app = await electron.launch({
    executablePath: bin!,
    args: [ROOT, `--user-data-dir=${userData}`],
    env: { ...process.env } as Record<string, string>
  })
  try {
    const win = await app.firstWindow()
    await expect(win.getByTestId('balance')).toBeVisible()
    // No Node in the page, and the bridge is the typed object only.
    expect(await win.evaluate(() => typeof (globalThis as { require?: unknown }).require)).toBe('undefined')
    expect(
      await win.evaluate(() => Object.keys((globalThis as unknown as { certdesk: object }).certdesk).length)
    ).toBeGreaterThan(5)
    // Sandboxed renderers have no `process`; contextIsolation keeps the page from the preload's world.
    expect(await win.evaluate(() => typeof (globalThis as { process?: unknown }).process)).toBe('undefined')
  } finally {
    await app.close()
  }
})
