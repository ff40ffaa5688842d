/**
 * The order being looked at. Everything shown of it is keyed by `orderId`: opening another
 * order drops it all at once, and an answer that arrives for an order no longer on screen is
 * dropped too, so one order's certificate, history or messages never show on another's page.
 */
import type {
  CertificateDetailView,
  ConfigureInput,
  CsrDraftView,
  DcvMethod,
  OrderView,
  OutboxMessageView,
  PfxEncryption,
  ReissueInput,
  ReissuePlanView,
  RevocationInput,
  SslStatusView
} from '../../src-preload/contract'
import { bridge } from '../bridge'
import { errorMessage } from '../lib/format'
import { rid, type Slice, type Store } from './slice'

export interface OrderSlice {
  /** The order the page is about, set before its data arrives. */
  orderId: number | null
  order: OrderView | null
  orderError: string | null
  lastRefund: { refunded: number; newBalance: number } | null
  loadOrder(id: number): Promise<void>
  cancelOrder(id: number): Promise<void>
  payOrder(id: number): Promise<void>
  /** Keeps a key generated here in the main process's vault; true once stored. */
  storeKey(orderId: number, pkcs8Pem: string): Promise<boolean>
  /** The CSR generated here and kept with its key until it is submitted or discarded. */
  csrDraft: (CsrDraftView & { orderId: number }) | null
  loadCsrDraft(orderId: number): Promise<void>
  /** Keeps a generated key and its CSR together; the API's message on failure, null once kept. */
  keepCsrDraft(orderId: number, pkcs8Pem: string, csrPem: string): Promise<string | null>
  /** Forgets the kept key and CSR of an order that has not taken a CSR; true once done. */
  discardCsrDraft(orderId: number): Promise<boolean>
  /**
   * The kept key as a PEM file: PKCS#8, or with a password an encrypted PKCS#8 the main process
   * builds; the API's message on failure.
   */
  exportKeyFile(orderId: number, password: string): Promise<{ pem: string } | { error: string }>
  /** A PKCS#12 file of the kept key and the current certificate, built by the main process. */
  exportPfx(
    orderId: number,
    password: string,
    encryption?: PfxEncryption
  ): Promise<{ pfx: Uint8Array<ArrayBuffer> } | { error: string }>
  /** Submits the CSR and DCV choice; the API's message on failure, null on success. */
  configure(input: ConfigureInput): Promise<string | null>
  ssl: SslStatusView | null
  certDetail: (CertificateDetailView & { orderId: number }) | null
  /** Live status; `recheck` runs the pending domain checks (and issues once all pass). */
  loadSsl(orderId: number): Promise<void>
  changeDcv(orderId: number, method: DcvMethod, approverEmail?: string): Promise<string | null>
  /** Another method for one name; the API's message on failure, null on success. */
  changeNameDcv(orderId: number, name: string, method: DcvMethod): Promise<string | null>
  /** The addresses each name may be approved at (BR §3.2.2.4.4); empty lists when they cannot be read. */
  approverChoices(names: string[]): Promise<Record<string, string[]>>
  resendValidation(orderId: number): Promise<void>
  outbox: OutboxMessageView[]
  loadOutbox(orderId: number): Promise<void>
  /** Records an approval code; with `name`, the code mailed for that name. */
  approveEmail(orderId: number, code: string, name?: string): Promise<string | null>
  /** Mails a new code for one name to another approver; the API's message on failure. */
  chooseApprover(orderId: number, name: string, approverEmail: string): Promise<string | null>
  reissue(input: ReissueInput): Promise<string | null>
  /** What a reissue for `names` would do; the core's reason when it would be refused. */
  reissuePlan(orderId: number, names?: string[]): Promise<{ plan: ReissuePlanView } | { error: string }>
  /** Revokes a certificate of the order; the core's message on failure, null once revoked. */
  revokeCertificate(orderId: number, revocation: RevocationInput): Promise<string | null>
  loadCertificate(orderId: number): Promise<void>
  caRoot(): Promise<string | null>
}

/** The per-order state of a page about `orderId`, before anything of it has arrived. */
export const freshOrderState = (orderId: number | null): Partial<Store> => ({
  orderId,
  order: null,
  orderError: null,
  lastRefund: null,
  ssl: null,
  certDetail: null,
  outbox: [],
  csrDraft: null,
  orderEvents: null
})

export const orderSlice: Slice<OrderSlice> = (set, get) => {
  /** True while `orderId` is the order on screen; answers for any other order are dropped. */
  const current = (orderId: number): boolean => get().orderId === orderId
  const setSsl = (ssl: SslStatusView): void => {
    if (current(ssl.order.id)) set({ ssl, order: ssl.order })
  }
  return {
    orderId: null,
    order: null,
    orderError: null,
    lastRefund: null,
    async loadOrder(id) {
      if (!current(id)) set(freshOrderState(id))
      try {
        const order = await bridge.getOrder(rid(get), id)
        if (current(id)) set({ order, orderError: null })
      } catch (err) {
        if (current(id)) set({ orderError: errorMessage(err) })
      }
    },
    async cancelOrder(id) {
      try {
        const r = await bridge.cancelOrder(rid(get), id)
        if (current(id)) set({ order: r.order, lastRefund: { refunded: r.refunded, newBalance: r.newBalance } })
        get().toast('ok', `Order ${r.order.orderNumber} cancelled`)
        void get().refreshResellers()
        void get().setListFilter('orders', get().orders.filter)
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async payOrder(id) {
      try {
        const r = await bridge.payOrder(rid(get), id)
        if (current(id)) set({ order: r.order })
        get().toast('ok', `Order ${r.order.orderNumber} paid from credit`)
        void get().refreshResellers()
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async storeKey(orderId, pkcs8Pem) {
      try {
        await bridge.storePrivateKey(rid(get), orderId, pkcs8Pem)
        const o = get().order
        if (o && o.id === orderId) set({ order: { ...o, hasStoredKey: true } })
        return true
      } catch (err) {
        get().toast('error', errorMessage(err))
        return false
      }
    },
    csrDraft: null,
    async loadCsrDraft(orderId) {
      try {
        const draft = await bridge.csrDraft(rid(get), orderId)
        if (current(orderId)) set({ csrDraft: draft && { ...draft, orderId } })
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async keepCsrDraft(orderId, pkcs8Pem, csrPem) {
      try {
        const draft = await bridge.keepCsrDraft(rid(get), orderId, { pkcs8Pem, csrPem })
        const o = get().order
        if (current(orderId) && o) set({ csrDraft: { ...draft, orderId }, order: { ...o, hasStoredKey: true } })
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async discardCsrDraft(orderId) {
      try {
        await bridge.discardCsrDraft(rid(get), orderId)
        const o = get().order
        if (current(orderId) && o) set({ csrDraft: null, order: { ...o, hasStoredKey: false } })
        get().toast('ok', 'The generated key and CSR were discarded')
        return true
      } catch (err) {
        get().toast('error', errorMessage(err))
        return false
      }
    },
    async exportKeyFile(orderId, password) {
      try {
        const r = rid(get)
        if (password) return await bridge.exportEncryptedKey(r, orderId, password)
        return { pem: (await bridge.exportPrivateKey(r, orderId)).pkcs8Pem }
      } catch (err) {
        return { error: errorMessage(err) }
      }
    },
    async exportPfx(orderId, password, encryption) {
      try {
        const { pfxBase64 } = await bridge.exportPfx(rid(get), orderId, password, encryption)
        return { pfx: Uint8Array.from(atob(pfxBase64), (c) => c.charCodeAt(0)) }
      } catch (err) {
        return { error: errorMessage(err) }
      }
    },
    async configure(input) {
      try {
        setSsl(await bridge.configureOrder(rid(get), input))
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    ssl: null,
    certDetail: null,
    async loadSsl(orderId) {
      try {
        // Looking runs the pending checks for those who may run them; a viewer sees the status as it stands.
        const ssl = get().allowed.has('sslStatus')
          ? await bridge.sslStatus(rid(get), orderId)
          : await bridge.storedSslStatus(rid(get), orderId)
        setSsl(ssl)
        if (ssl.certificate) void get().loadCertificate(orderId)
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async changeDcv(orderId, method, approverEmail) {
      try {
        setSsl(await bridge.changeDcv(rid(get), orderId, method, approverEmail))
        get().toast('ok', `Validation method changed to ${method}`)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async changeNameDcv(orderId, name, method) {
      try {
        setSsl(await bridge.changeNameDcv(rid(get), orderId, name, method))
        get().toast('ok', `${name} is now validated by ${method.toUpperCase()}`)
        if (method === 'email') void get().loadOutbox(orderId)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async approverChoices(names) {
      try {
        return await bridge.approverChoices(names)
      } catch (err) {
        get().toast('error', errorMessage(err))
        return {}
      }
    },
    async resendValidation(orderId) {
      try {
        setSsl(await bridge.resendValidation(rid(get), orderId))
        get().toast('ok', 'Approval email sent again')
        void get().loadOutbox(orderId)
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    outbox: [],
    async loadOutbox(orderId) {
      // Approval codes are for those who work on orders: a viewer's page does not ask for them.
      if (!get().allowed.has('emailOutbox')) return
      try {
        const outbox = await bridge.emailOutbox(rid(get), orderId)
        if (current(orderId)) set({ outbox })
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async chooseApprover(orderId, name, approverEmail) {
      try {
        setSsl(await bridge.chooseApprover(rid(get), orderId, name, approverEmail))
        get().toast('ok', `Approval email for ${name} sent to ${approverEmail}`)
        void get().loadOutbox(orderId)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async approveEmail(orderId, code, name) {
      try {
        const ssl = await bridge.approveEmail(rid(get), orderId, code, name)
        setSsl(ssl)
        if (ssl.certificate) void get().loadCertificate(orderId)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async reissue(input) {
      try {
        setSsl(await bridge.reissue(rid(get), input))
        get().toast('ok', 'Reissue requested')
        void get().loadCertificate(input.orderId)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async reissuePlan(orderId, names) {
      try {
        return { plan: await bridge.reissuePlan(rid(get), orderId, names) }
      } catch (err) {
        return { error: errorMessage(err) }
      }
    },
    async revokeCertificate(orderId, revocation) {
      try {
        const detail = await bridge.revokeCertificate(rid(get), orderId, revocation)
        if (current(orderId)) set({ certDetail: { ...detail, orderId } })
        get().toast('ok', 'Certificate revoked')
        void get().loadOrder(orderId)
        return null
      } catch (err) {
        return errorMessage(err)
      }
    },
    async loadCertificate(orderId) {
      try {
        const detail = await bridge.certificate(rid(get), orderId)
        if (current(orderId)) set({ certDetail: { ...detail, orderId } })
      } catch (err) {
        get().toast('error', errorMessage(err))
      }
    },
    async caRoot() {
      try {
        return (await bridge.caRootPem()).pem
      } catch (err) {
        get().toast('error', errorMessage(err))
        return null
      }
    }
  }
}
