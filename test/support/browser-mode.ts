/**
 * Browser mode as `serve --ui` builds it, on a real listener over a fresh data dir with the demo
 * reseller and the real keychain, signed in once through its one-time link the way a browser
 * opens it. Calls made outside a browser send what the UI's page sends: the session cookie and
 * the page's Origin.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { browserUiOptions } from '../../src-main/app/browser-mode'
import { ensureDemoReseller, openService, type Service } from '../../src-main/core/service'
import { buildServer, listen, type Listening } from '../../src-main/http/server'

const ROOT = join(__dirname, '..', '..')

export interface BrowserMode {
  dataDir: string
  service: Service
  listening: Listening
  /** The listener's base URL, which is also the UI page's origin. */
  url: string
  /** The one-time sign-in link, used up already by the sign-in below. */
  loginUrl: string
  /** `certdesk_session=…`, as the browser would send it. */
  cookie: string
  /** The demo reseller's id. */
  resellerId: number
  close(): Promise<void>
}

export async function startBrowserMode(prefix: string): Promise<BrowserMode> {
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const service = openService({ dataDir })
  const resellerId = ensureDemoReseller(service)!.id
  let url = ''
  const ui = browserUiOptions(service, () => url, join(ROOT, 'out', 'renderer'))
  const listening = await listen(await buildServer(service, ui.server))
  url = listening.url
  const loginUrl = ui.loginUrl(url)
  const res = await fetch(loginUrl, { redirect: 'manual' })
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]
  return {
    dataDir,
    service,
    listening,
    url,
    loginUrl,
    cookie,
    resellerId,
    close: async () => {
      await listening.close()
      service.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
