/**
 * What every slice shares: the combined store type (zustand's slices pattern, each slice typed
 * against the whole store so its actions can read and set the others) and the acting reseller.
 */
import type { StateCreator } from 'zustand'
import type { AccountSlice } from './account'
import type { AcmeSlice } from './acme'
import type { AdminsSlice } from './admins'
import type { AlertsSlice } from './alerts'
import type { BackupSlice } from './backup'
import type { KeysSlice } from './api-keys'
import type { BillingSlice } from './billing'
import type { CatalogueSlice } from './catalogue'
import type { DashboardSlice } from './dashboard'
import type { DeploySlice } from './deploys'
import type { InstallationsSlice } from './installations'
import type { ListsSlice } from './lists'
import type { DraftSlice } from './new-order'
import type { OrderSlice } from './order'
import type { RenewalSlice } from './renewal'
import type { ScreensSlice } from './screens'
import type { SessionSlice } from './session'

export type Store = SessionSlice &
  DashboardSlice &
  CatalogueSlice &
  ListsSlice &
  BillingSlice &
  OrderSlice &
  DraftSlice &
  KeysSlice &
  DeploySlice &
  AcmeSlice &
  InstallationsSlice &
  BackupSlice &
  RenewalSlice &
  ScreensSlice &
  AlertsSlice &
  AccountSlice &
  AdminsSlice

export type Slice<T> = StateCreator<Store, [], [], T>

export const rid = (get: () => Store): number => {
  const id = get().resellerId
  if (id === null) throw new Error('choose a reseller account first')
  return id
}

/**
 * Calls of one kind of which only the latest counts (a list load, a quote). Call the returned
 * function as each starts; what it returns says whether that call is still the latest, so the
 * answer to one that another has followed since is dropped, whatever order the answers come in.
 */
export function latestOnly(): () => () => boolean {
  let started = 0
  return () => {
    const mine = ++started
    return () => mine === started
  }
}
