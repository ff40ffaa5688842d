/**
 * The ACME issuer's side of ACME Renewal Information (RFC 9773, ari.ts): after each issuance the
 * certificate's window is read from the CA's `renewalInfo` resource (§4.2), or the 14-day rule
 * applies when the CA has none; the scheduler's looks at windows whose Retry-After has passed
 * (§4.3) come through `refresh`.
 */
import type { Agent } from 'node:https'
import {
  certIdOfPem,
  fetchDirectory,
  fetchRenewalInfo,
  onceMore,
  type AriRow,
  type RenewalInfo,
  type RenewalWindows
} from './ari'
import type { Clock } from '../time'

/** What the tracking asks of the issuer: the CA configured now and how to reach it. */
export interface TrackedCa {
  directoryUrl(): Promise<string>
  agent(): Promise<Agent | undefined>
  enabled(): Promise<boolean>
}

export class RenewalTracking {
  /** Why a renewal's `replaces` was refused, kept until its window is stored (shown with it). */
  readonly replacesRefused = new Map<number, string>()

  constructor(
    private readonly windows: RenewalWindows,
    private readonly clock: Clock,
    private readonly ca: TrackedCa
  ) {}

  /** The CA's renewalInfo URL (RFC 9773 §3), or null when its directory has none. */
  private async renewalInfoUrl(): Promise<string | null> {
    const body = await fetchDirectory(await this.ca.directoryUrl(), await this.ca.agent())
    const url = (body as { renewalInfo?: unknown }).renewalInfo
    return typeof url === 'string' ? url : null
  }

  /** After each issuance: the certificate's renewal window (RFC 9773 §4), or the 14-day rule. */
  async track(orderId: number, leafPem: string, notAfter: Date): Promise<void> {
    let certId: string
    try {
      certId = certIdOfPem(leafPem)
    } catch {
      // No authority key identifier: RFC 9773 §4.1 cannot name it; the 14-day rule from this
      // certificate (lifecycle.ts) is its schedule, not a window of the certificate before.
      await this.windows.forget(orderId)
      return
    }
    let info: RenewalInfo | null = null
    let error: string | null = null
    try {
      const base = await onceMore(() => this.renewalInfoUrl())
      if (base) info = await onceMore(async () => fetchRenewalInfo(base, certId, await this.ca.agent(), this.clock()))
    } catch (err) {
      error = `could not read the renewal information: ${(err as Error).message}`
    }
    const refused = this.replacesRefused.get(orderId) ?? null
    this.replacesRefused.delete(orderId)
    await this.windows.store(orderId, certId, await this.ca.directoryUrl(), info, notAfter, error ?? refused)
  }

  /**
   * A scheduler look at windows whose Retry-After has passed (RFC 9773 §4.3). Returns the looks
   * that failed, so the pass reports them; a failed look keeps the window and is asked again
   * later. A look that fails on the network is tried once more at once (§4.3.3 leaves the retry
   * of a failed look to the client): one dropped connection must not hold back a renewal the
   * CA asked for by six hours.
   */
  /** The scheduler's look at windows due a new look (AcmeIssuer.refreshWindows). */
  async refresh(now: Date): Promise<{ order_id: number; error: string }[]> {
    const due = await this.windows.dueChecks(now)
    if (due.length === 0 || !(await this.ca.enabled())) return []
    const failed: { order_id: number; error: string }[] = []
    const fail = async (r: AriRow, error: string): Promise<void> => {
      await this.windows.failed(r, error)
      failed.push({ order_id: r.order_id, error })
    }
    let base: string | null
    try {
      base = await onceMore(() => this.renewalInfoUrl())
    } catch (err) {
      for (const r of due) await fail(r, `could not read the directory: ${(err as Error).message}`)
      return failed
    }
    for (const r of due) {
      if (!base || r.directory_url !== (await this.ca.directoryUrl())) {
        await fail(r, 'the configured CA offers no renewal information for this certificate')
        continue
      }
      try {
        await this.windows.update(
          r,
          await onceMore(async () => fetchRenewalInfo(base, r.cert_id, await this.ca.agent(), now))
        )
      } catch (err) {
        await fail(r, `could not read the renewal information: ${(err as Error).message}`)
      }
    }
    return failed
  }
}
