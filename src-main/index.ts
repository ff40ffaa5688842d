/**
 * Electron entry. Thin: it opens the service, starts the local listener and shows the window.
 */
import { app, BrowserWindow } from 'electron'
import { join } from 'node:path'
import { startSchedulerLoop } from './core/scheduler'
import { openService } from './core/service'
import { buildServer, listen } from './http/server'
import { DEFAULT_PORT } from './cli'

async function start(): Promise<void> {
  const service = openService({ dataDir: app.getPath('userData') })
  const server = await listen(await buildServer(service), '127.0.0.1', DEFAULT_PORT)
  const stopScheduler = startSchedulerLoop(service.scheduler, (line) => console.log(`certdesk: ${line}`))
  const win = new BrowserWindow({
    width: 1280,
    height: 840,
    webPreferences: {
      preload: join(__dirname, '../preload/index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false
    }
  })
  await win.loadFile(join(__dirname, '../renderer/index.html'))
  app.on('before-quit', () => {
    void stopScheduler()
      .then(() => server.close())
      .then(() => service.close())
  })
}

if (!app.requestSingleInstanceLock()) app.quit()
else void app.whenReady().then(start)
