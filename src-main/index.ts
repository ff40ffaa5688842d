/**
 * Electron entry. Thin: it opens the service, starts the local listener, serves the bridge
 * over IPC and shows one hardened window (contextIsolation, sandbox, no Node, strict CSP, no
 * navigation, no new windows, every permission request denied, single instance).
 */
import { app, BrowserWindow, ipcMain, Notification, session, shell } from 'electron'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startAcmeServer } from './acme/server'
import { CONTENT_SECURITY_POLICY } from './app/browser-ui'
import { createHandlers } from './app/handlers'
import { serveOverIpc } from './app/ipc'
import { DEFAULT_PORT } from './cli'
import { startSchedulerLoop } from './core/scheduler'
import { ensureDemoReseller, openService } from './core/service'
import { API_VERSION, buildServer, listen } from './http/server'

/** How often the notifier looks for expiring certificates and stuck validations. */
const NOTIFY_EVERY_MS = 6 * 60 * 60 * 1000

async function start(): Promise<void> {
  // better-sqlite3 built for Electron's ABI by set-up; the module's own build is Node's.
  const electronNative = join(app.getAppPath(), 'node_modules', '.certdesk-electron', 'better_sqlite3.node')
  const service = openService({
    dataDir: app.getPath('userData'),
    nativeBinding: existsSync(electronNative) ? electronNative : undefined
  })
  ensureDemoReseller(service)
  const server = await listen(await buildServer(service), '127.0.0.1', DEFAULT_PORT)
  // The embedded ACME server of ACME subscription products (issue 5), on its own HTTPS port.
  const acme = await startAcmeServer(service, { host: '127.0.0.1' }).catch((err: unknown) => {
    console.error(`certdesk: could not start the ACME server: ${(err as Error).message}`)
    return null
  })
  const pageUrl = pathToFileURL(join(__dirname, '../renderer/index.html')).href

  const handlers = createHandlers(service, {
    transport: 'electron',
    listenerUrl: () => server.url,
    apiVersion: API_VERSION
  })
  serveOverIpc(
    ipcMain,
    handlers,
    (event) => event.senderFrame?.url.split('#')[0] === pageUrl,
    (msg, err) => console.error(msg, err)
  )

  const ses = session.defaultSession
  // Every permission is denied except writing to the clipboard, which the copy buttons need.
  const allowed = (permission: string): boolean => permission === 'clipboard-sanitized-write'
  ses.setPermissionRequestHandler((_wc, permission, callback) => callback(allowed(permission)))
  ses.setPermissionCheckHandler((_wc, permission) => allowed(permission))
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONTENT_SECURITY_POLICY] } })
  })

  const stopScheduler = startSchedulerLoop(service.scheduler, (line) => console.log(`certdesk: ${line}`))

  const win = new BrowserWindow({
    width: 1320,
    height: 860,
    title: 'CertDesk',
    webPreferences: {
      preload: join(__dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webviewTag: false,
      spellcheck: false
    }
  })
  win.webContents.setWindowOpenHandler(({ url }) => {
    // Links to the outside world open in the user's browser, never in a CertDesk window.
    if (url.startsWith('https://')) void shell.openExternal(url)
    return { action: 'deny' }
  })
  win.webContents.on('will-navigate', (event) => event.preventDefault())
  win.webContents.on('will-attach-webview', (event) => event.preventDefault())
  await win.loadURL(pageUrl)

  const watch = service.watchlist
  const told = new Set<string>()
  const notify = (): void => {
    if (!Notification.isSupported()) return
    for (const o of watch.expiringAll()) {
      const key = `exp:${o.id}:${o.certValidTill}`
      if (told.has(key)) continue
      told.add(key)
      new Notification({
        title: 'Certificate expiring without renewal',
        body: `${o.domain} (${o.orderNumber}) ends on ${o.certValidTill}; its subscription does not renew it.`
      }).show()
    }
    for (const o of watch.stuckValidations()) {
      const key = `dcv:${o.id}:${o.updatedAt}`
      if (told.has(key)) continue
      told.add(key)
      new Notification({
        title: 'Validation waiting',
        body: `${o.domain} (${o.orderNumber}) has waited for domain validation since ${o.updatedAt}.`
      }).show()
    }
  }
  notify()
  const timer = setInterval(notify, NOTIFY_EVERY_MS)

  app.on('second-instance', () => {
    if (win.isMinimized()) win.restore()
    win.focus()
  })
  app.on('before-quit', () => {
    clearInterval(timer)
    void stopScheduler()
      .then(() => acme?.close())
      .then(() => server.close())
      .then(() => service.close())
  })
}

if (!app.requestSingleInstanceLock()) app.quit()
else {
  app.on('web-contents-created', (_e, contents) => {
    contents.on('will-navigate', (event) => event.preventDefault())
    contents.setWindowOpenHandler(() => ({ action: 'deny' }))
  })
  void app.whenReady().then(start)
}
