/** A backup of the store started from Settings, polled for its progress bar. */
import type { AppApi } from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import type { Slice } from './slice'

export type BackupJob = Awaited<ReturnType<AppApi['backupProgress']>>

export interface BackupSlice {
  backup: BackupJob
  startBackup(folder: string): Promise<void>
}

/** How often the bar asks how far the copy got. */
const POLL_MS = 250

export const backupSlice: Slice<BackupSlice> = (set, get) => ({
  backup: { state: 'idle', percent: 0, file: null, error: null },
  async startBackup(folder) {
    try {
      set({ backup: await bridge.startBackup(folder.trim() || undefined) })
      while (get().backup.state === 'running') {
        await new Promise((r) => setTimeout(r, POLL_MS))
        set({ backup: await bridge.backupProgress() })
      }
      const b = get().backup
      if (b.state === 'done') get().toast('ok', `Backup written to ${b.file}`)
      else if (b.error) get().toast('error', b.error)
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})
