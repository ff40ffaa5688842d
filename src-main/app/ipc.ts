/**
 * The bridge over Electron IPC: one `ipcMain.handle` per contract method on `certdesk:<name>`,
 * answering only the app's own window (its file:// page), never another frame or origin.
 */
import type { IpcMain, IpcMainInvokeEvent } from 'electron'
import { appMethodNames, CHANNEL_PREFIX } from '../../src-preload/contract'
import { callHandler, type AppHandlers } from './handlers'

export function serveOverIpc(
  ipc: IpcMain,
  handlers: AppHandlers,
  trusted: (event: IpcMainInvokeEvent) => boolean,
  log: (msg: string, err: unknown) => void
): void {
  for (const name of appMethodNames) {
    ipc.handle(CHANNEL_PREFIX + name, async (event, ...args: unknown[]) => {
      if (!trusted(event)) return { success: false, error: 'request refused: not from the CertDesk window' }
      const answer = await callHandler(handlers, name, args)
      if (answer.fault) log(`bridge method ${name} failed`, answer.fault)
      return answer.body
    })
  }
}
