import { contextBridge, ipcRenderer } from 'electron'
import type { AppApi } from './contract'

const api: AppApi = {
  apiInfo: () => ipcRenderer.invoke('certdesk:apiInfo')
}

contextBridge.exposeInMainWorld('certdesk', api)
