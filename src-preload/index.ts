/**
 * The preload: exposes exactly one typed object, `window.certdesk`, derived from the contract's
 * method list. Each member invokes `certdesk:<method>` and unwraps the answer; `ipcRenderer`
 * itself never reaches the page, so a compromised page can call only these methods. Built as one CJS file because
 * the window runs with sandbox: true.
 */
import { contextBridge, ipcRenderer } from 'electron'
import { appMethodNames, BRIDGE_GLOBAL, CHANNEL_PREFIX, unwrap, type BridgeResult } from './channels'
import type { AppApi } from '../src-shared/app-api'

const api = Object.fromEntries(
  appMethodNames.map((name) => [
    name,
    async (...args: unknown[]) =>
      unwrap((await ipcRenderer.invoke(CHANNEL_PREFIX + name, ...args)) as BridgeResult<unknown>)
  ])
) as unknown as AppApi

contextBridge.exposeInMainWorld(BRIDGE_GLOBAL, api)
