/**
 * The bridge over Electron IPC: one `ipcMain.handle` per contract method on `certdesk:<name>`,
 * answering only the app's own window (its file:// page), never another frame or origin. The
 * window is the local desktop user's, the owner of this machine's book; every call goes through
 * the bridge's gate like an RPC call does.
 */
import type { IpcMain, IpcMainInvokeEvent } from 'electron'
import { appMethodNames, CHANNEL_PREFIX } from '../../src-preload/contract'
import type { BridgeGate } from './bridge-gate'
import { desktopCaller } from './caller'

export function serveOverIpc(
  ipc: IpcMain,
  gate: BridgeGate,
  trusted: (event: IpcMainInvokeEvent) => boolean,
  log: (msg: string, err: unknown) => void
): void {
  const caller = desktopCaller('desktop window')
  for (const name of appMethodNames) {
    ipc.handle(CHANNEL_PREFIX + name, async (event, ...args: unknown[]) => {
      if (!trusted(event)) return { success: false, error: 'request refused: not from the CertDesk window' }
      const answer = await gate.call(caller, name, args)
      if (answer.fault) log(`bridge method ${name} failed`, answer.fault)
      return answer.body
    })
  }
}
