/**
 * Electron entry. Thin: it starts CertDesk (src-main/runtime.ts, as `certdesk serve` does),
 * serves the bridge over IPC, shows one hardened window (contextIsolation, sandbox, no Node,
 * strict CSP, no navigation, no new windows, every permission request denied, single instance)
 * and the desktop notifications.
 */
import { app, BrowserWindow, dialog, ipcMain, Notification, session, shell } from 'electron'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CONTENT_SECURITY_POLICY } from './app/browser-ui'
import { bridgeGate } from './app/bridge-gate'
import { createHandlers } from './app/handlers'
import { serveOverIpc } from './app/ipc'
import { TeamConnection } from './app/team-client'
import { NOTICE_EVERY_MS, noticeFeed } from './desktop-notices'
import { API_VERSION } from './http/server'
import { startCertDesk } from './runtime'

async function start(): Promise<void> {
  // better-sqlite3 built for Electron's ABI by set-up; the module's own build is Node's.
  const electronNative = join(app.getAppPath(), 'node_modules', '.certdesk-electron', 'better_sqlite3.node')
  const running = await startCertDesk({
    dataDir: app.getPath('userData'),
    nativeBinding: existsSync(electronNative) ? electronNative : undefined,
    demo: true,
    log: {
      info: (line) => console.log(`certdesk: ${line}`),
      error: (line) => console.error(`certdesk: ${line}`)
    }
  })
  const { service } = running
  const pageUrl = pathToFileURL(join(__dirname, '../renderer/index.html')).href

  // The window works on this machine's book, or as a client on a team server's (Settings).
  const team = new TeamConnection()
  const handlers = createHandlers(service, {
    transport: 'electron',
    team,
    listenerUrl: () => running.urls.api,
    apiVersion: API_VERSION,
    // CSV exports: the native save dialog picks the file the main process writes.
    chooseSavePath: async (name) => {
      const options = {
        defaultPath: join(app.getPath('downloads'), name),
        filters: [{ name: 'CSV', extensions: ['csv'] }]
      }
      const owner = BrowserWindow.getFocusedWindow()
      const r = owner ? await dialog.showSaveDialog(owner, options) : await dialog.showSaveDialog(options)
      return r.canceled || !r.filePath ? null : r.filePath
    }
  })
  serveOverIpc(
    ipcMain,
    bridgeGate(service, handlers, team),
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

  const nextNotices = noticeFeed(service.watchlist)
  const notify = (): void => {
    if (!Notification.isSupported()) return
    for (const n of nextNotices()) new Notification(n).show()
  }
  notify()
  const timer = setInterval(notify, NOTICE_EVERY_MS)

  app.on('second-instance', () => {
    if (win.isMinimized()) win.restore()
    win.focus()
  })
  app.on('before-quit', () => {
    clearInterval(timer)
    void running.stop()
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
