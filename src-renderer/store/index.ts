/**
 * Renderer state, zustand's slices pattern: one slice per domain, combined with the curried
 * `create<T>()(…)`. Actions call the bridge; components select one field per hook.
 */
import { create, type StateCreator } from 'zustand'
import type {
  AcmeCommandsView,
  AcmeSubscriptionView,
  ApiKeyView,
  CreatedDeployTargetView,
  DeployRunView,
  DeployTargetInput,
  DeployTargetView,
  CertificateDetailView,
  CsrDraftView,
  OutboxMessageView,
  ConfigureInput,
  DcvMethod,
  ReissueInput,
  SslStatusView,
  InvoiceView,
  TransactionView,
  DashboardView,
  InvoiceStatus,
  OrderFilter,
  OrderStatus,
  OrderView,
  PageView,
  PaymentMethod,
  ProductFilter,
  ProductView,
  QuoteView,
  ResellerView,
  SettingsProblems,
  SettingsView
} from '../../src-preload/contract'
import { bridge, endBrowserSession, onSignedOut } from '../bridge'
import { errorMessage } from '../lib/format'

export type Screen =
  | { name: 'dashboard' }
  | { name: 'catalogue' }
  | { name: 'new-order' }
  | { name: 'orders' }
  | { name: 'order'; id: number }
  | { name: 'billing' }
  | { name: 'api' }
  | { name: 'acme' }
  | { name: 'settings' }

export interface Toast {
  id: number
  kind: 'ok' | 'error'
  text: string
}

// ---- session: who the desktop user acts for, the settings, navigation, messages
interface SessionSlice {
  resellers: ResellerView[]
  resellerId: number | null
  settings: SettingsView | null
  screen: Screen
  toasts: Toast[]
  loadSession(): Promise<void>
  selectReseller(id: number): void
  refreshResellers(): Promise<void>
  /** Adds a reseller account and acts for it; the API's message on failure, null on success. */
  addReseller(input: Parameters<typeof bridge.createReseller>[0]): Promise<string | null>
  go(screen: Screen): void
  toast(kind: Toast['kind'], text: string): void
  /** Saves all fields or none; answers the core's reason per refused field (empty once saved). */
  saveSettings(input: Parameters<typeof bridge.updateSettings>[0]): Promise<SettingsProblems>
  /** Browser mode: why this tab must sign in again (the server's message), null while signed in. */
  signedOut: string | null
  /** Browser mode: whether there is a session to sign out of (the Electron window has none). */
  canSignOut: boolean
  /** Ends the browser session on the server and shows the sign-in-needed screen. */
  signOut(): Promise<void>
}

// ---- dashboard
interface DashboardSlice {
  dashboard: DashboardView | null
  loadDashboard(): Promise<void>
}

// ---- catalogue
interface CatalogueSlice {
  products: ProductView[]
  productFilter: ProductFilter
  productsError: string | null
  loadProducts(filter?: ProductFilter): Promise<void>
}

// ---- paged lists (orders, invoices, ledger): server-side filters, pages fetched as they scroll in
export const PAGE_SIZE = 100
export type ListName = 'orders' | 'invoices' | 'transactions'
export interface ListState<T> {
  filter: { status?: string; domain?: string }
  total: number
  pages: Record<number, T[]>
  version: number
  error: string | null
}
interface ListsSlice {
  orders: ListState<OrderView>
  invoices: ListState<InvoiceView>
  transactions: ListState<TransactionView>
  setListFilter(name: ListName, filter: ListState<unknown>['filter']): Promise<void>
  loadPage(name: ListName, index: number): Promise<void>
  /** Records a payment received outside CertDesk; false (and the form kept) on an error. */
  recordTopUp(amountCents: number, description: string): Promise<boolean>
  /** Every row of a list under its filter, page by page, for CSV export. */
  exportList(name: ListName, progress: (done: number, total: number) => void): Promise<unknown[]>
}

// ---- the order being looked at. Everything shown of it is keyed by `orderId`: opening another
// order drops it all at once, and an answer that arrives for an order no longer on screen is
// dropped too, so one order's certificate, history or messages never show on another's page.
interface OrderSlice {
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
  exportKey(orderId: number): Promise<{ pkcs8Pem: string; matchesCertificate: boolean | null } | null>
  /** Submits the CSR and DCV choice; the API's message on failure, null on success. */
  configure(input: ConfigureInput): Promise<string | null>
  ssl: SslStatusView | null
  certDetail: (CertificateDetailView & { orderId: number }) | null
  /** Live status; `recheck` runs the pending domain checks (and issues once all pass). */
  loadSsl(orderId: number): Promise<void>
  changeDcv(orderId: number, method: DcvMethod, approverEmail?: string): Promise<string | null>
  resendValidation(orderId: number): Promise<void>
  outbox: OutboxMessageView[]
  loadOutbox(orderId: number): Promise<void>
  /** Records an approval code; with `name`, the code mailed for that name. */
  approveEmail(orderId: number, code: string, name?: string): Promise<string | null>
  /** Mails a new code for one name to another approver; the API's message on failure. */
  chooseApprover(orderId: number, name: string, approverEmail: string): Promise<string | null>
  reissue(input: ReissueInput): Promise<string | null>
  loadCertificate(orderId: number): Promise<void>
  caRoot(): Promise<string | null>
}

// ---- the new-order wizard; the draft outlives errors and screen changes
export interface Draft {
  productId: number | null
  domain: string
  period: number
  sanCount: number
  sanWildcardCount: number
  contactEmail: string
  payment: PaymentMethod
}
interface DraftSlice {
  draft: Draft
  quote: QuoteView | null
  quoteError: string | null
  submitting: boolean
  submitError: string | null
  setDraft(patch: Partial<Draft>): void
  submitOrder(): Promise<OrderView | null>
}

// ---- API keys
interface KeysSlice {
  apiKeys: ApiKeyView[]
  shownKey: { id: number; key: string } | null
  loadKeys(): Promise<void>
  createKey(label: string): Promise<void>
  copyKey(id: number): Promise<void>
  revokeKey(id: number): Promise<void>
  hideKey(): void
}

// ---- deploy targets of the order being looked at
interface DeploySlice {
  deployOrderId: number | null
  deployTargets: DeployTargetView[]
  deployRuns: DeployRunView[]
  deployError: string | null
  /** Orders with a "Deploy now" on its way (the answer comes once every run has its outcome). */
  deploying: number[]
  loadDeploys(orderId: number): Promise<void>
  /** Adds a target; the created target (with its one-time secret) on success, the API's message on failure. */
  addDeployTarget(orderId: number, input: DeployTargetInput): Promise<CreatedDeployTargetView | string>
  removeDeployTarget(orderId: number, targetId: number): Promise<void>
  deployNow(orderId: number): Promise<void>
}

// ---- ACME subscriptions of the acting reseller
interface AcmeSlice {
  acmeSubscriptions: AcmeSubscriptionView[]
  acmeError: string | null
  /** HMAC keys revealed on request with the commands that hold them, by order id; forgotten on reload. */
  acmeKeys: Record<number, { eabHmacKey: string; commands: AcmeCommandsView }>
  loadAcme(): Promise<void>
  revealAcmeKey(orderId: number): Promise<void>
}

export type Store = SessionSlice &
  DashboardSlice &
  CatalogueSlice &
  ListsSlice &
  OrderSlice &
  DraftSlice &
  KeysSlice &
  DeploySlice &
  AcmeSlice
type Slice<T> = StateCreator<Store, [], [], T>

let toastId = 0
const rid = (get: () => Store): number => {
  const id = get().resellerId
  if (id === null) throw new Error('choose a reseller account first')
  return id
}

const sessionSlice: Slice<SessionSlice> = (set, get) => ({
  resellers: [],
  resellerId: null,
  settings: null,
  screen: { name: 'dashboard' },
  toasts: [],
  async loadSession() {
    try {
      const [resellers, settings] = await Promise.all([bridge.listResellers(), bridge.settings()])
      const saved = Number(localStorage.getItem('certdesk.reseller'))
      const chosen = resellers.find((r) => r.id === saved) ?? resellers[0]
      set({ resellers, settings, resellerId: chosen?.id ?? null })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  selectReseller(id) {
    localStorage.setItem('certdesk.reseller', String(id))
    set({
      resellerId: id,
      dashboard: null,
      ...freshOrderState(null),
      quote: null,
      apiKeys: [],
      shownKey: null
    })
    for (const name of ['orders', 'invoices', 'transactions'] as const)
      void get().setListFilter(name, get()[name].filter)
  },
  async refreshResellers() {
    set({ resellers: await bridge.listResellers() })
  },
  async addReseller(input) {
    try {
      const r = await bridge.createReseller(input)
      await get().refreshResellers()
      get().selectReseller(r.id)
      get().toast('ok', `Reseller ${r.name} added`)
      return null
    } catch (err) {
      return errorMessage(err)
    }
  },
  go(screen) {
    set({ screen })
  },
  toast(kind, text) {
    const id = ++toastId
    set({ toasts: [...get().toasts, { id, kind, text }] })
    setTimeout(() => set({ toasts: get().toasts.filter((t) => t.id !== id) }), kind === 'error' ? 8000 : 2500)
  },
  async saveSettings(input) {
    try {
      set({ settings: await bridge.updateSettings(input) })
      get().toast('ok', 'Settings saved')
      return {}
    } catch (err) {
      // The save was refused as a whole; ask the core which fields, to say so next to each.
      const problems = await bridge.checkSettings(input).catch((): SettingsProblems => ({}))
      if (Object.keys(problems).length === 0) get().toast('error', errorMessage(err))
      return problems
    }
  },
  signedOut: null,
  canSignOut: endBrowserSession !== null,
  async signOut() {
    if (!endBrowserSession) return
    try {
      await endBrowserSession()
      set({ signedOut: 'You signed out. To continue, open the newest sign-in link CertDesk printed in its terminal.' })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})

const dashboardSlice: Slice<DashboardSlice> = (set, get) => ({
  dashboard: null,
  async loadDashboard() {
    try {
      set({ dashboard: await bridge.dashboard(rid(get)) })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})

const catalogueSlice: Slice<CatalogueSlice> = (set, get) => ({
  products: [],
  productFilter: {},
  productsError: null,
  async loadProducts(filter = get().productFilter) {
    set({ productFilter: filter })
    try {
      set({ products: await bridge.listProducts(rid(get), filter), productsError: null })
    } catch (err) {
      set({ products: [], productsError: errorMessage(err) })
    }
  }
})

const emptyList = <T>(): ListState<T> => ({ filter: {}, total: 0, pages: {}, version: 0, error: null })
const inflight = new Set<string>()

const fetchers: Record<
  ListName,
  (resellerId: number, filter: ListState<unknown>['filter'], offset: number) => Promise<PageView<unknown>>
> = {
  orders: (r, f, offset) =>
    bridge.listOrders(r, { status: f.status as OrderStatus | undefined, domain: f.domain } satisfies OrderFilter, {
      limit: PAGE_SIZE,
      offset
    }),
  invoices: (r, f, offset) =>
    bridge.listInvoices(r, { status: f.status as InvoiceStatus | undefined }, { limit: PAGE_SIZE, offset }),
  transactions: (r, _f, offset) => bridge.listTransactions(r, { limit: PAGE_SIZE, offset })
}

const listsSlice: Slice<ListsSlice> = (set, get) => ({
  orders: emptyList(),
  invoices: emptyList(),
  transactions: emptyList(),
  async setListFilter(name, filter) {
    const version = get()[name].version + 1
    set({ [name]: { ...emptyList(), filter, version } } as Partial<Store>)
    await get().loadPage(name, 0)
  },
  async loadPage(name, index) {
    const list = get()[name]
    const key = `${name}:${list.version}:${index}`
    if (list.pages[index] || inflight.has(key) || get().resellerId === null) return
    inflight.add(key)
    try {
      const page = await fetchers[name](rid(get), list.filter, index * PAGE_SIZE)
      const now = get()[name]
      // A filter changed while this page was on its way: drop the stale answer.
      if (now.version !== list.version) return
      set({
        [name]: { ...now, total: page.total, pages: { ...now.pages, [index]: page.items }, error: null }
      } as Partial<Store>)
    } catch (err) {
      set({ [name]: { ...get()[name], error: errorMessage(err) } } as Partial<Store>)
    } finally {
      inflight.delete(key)
    }
  },
  async recordTopUp(amountCents, description) {
    try {
      const tx = await bridge.topUp(rid(get), amountCents, description)
      get().toast('ok', `Top-up recorded; balance ${(tx.balanceAfter / 100).toFixed(2)} USD`)
      void get().refreshResellers()
      void get().setListFilter('transactions', {})
      return true
    } catch (err) {
      get().toast('error', errorMessage(err))
      return false
    }
  },
  async exportList(name, progress) {
    const filter = get()[name].filter
    const rows: unknown[] = []
    for (let offset = 0; ; offset += PAGE_SIZE) {
      const page = await fetchers[name](rid(get), filter, offset)
      rows.push(...page.items)
      progress(rows.length, page.total)
      if (page.items.length === 0 || rows.length >= page.total) return rows
    }
  }
})

/** The per-order state of a page about `orderId`, before anything of it has arrived. */
const freshOrderState = (orderId: number | null): Partial<Store> => ({
  orderId,
  order: null,
  orderError: null,
  lastRefund: null,
  ssl: null,
  certDetail: null,
  outbox: [],
  csrDraft: null
})

const orderSlice: Slice<OrderSlice> = (set, get) => {
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
    async exportKey(orderId) {
      try {
        return await bridge.exportPrivateKey(rid(get), orderId)
      } catch (err) {
        get().toast('error', errorMessage(err))
        return null
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
        const ssl = await bridge.sslStatus(rid(get), orderId)
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

const emptyDraft: Draft = {
  productId: null,
  domain: '',
  period: 12,
  sanCount: 0,
  sanWildcardCount: 0,
  contactEmail: '',
  payment: 'credit'
}
let quoteSeq = 0

const draftSlice: Slice<DraftSlice> = (set, get) => ({
  draft: emptyDraft,
  quote: null,
  quoteError: null,
  submitting: false,
  submitError: null,
  setDraft(patch) {
    const draft = { ...get().draft, ...patch }
    set({ draft, submitError: null })
    if (draft.productId === null) return set({ quote: null, quoteError: null })
    const seq = ++quoteSeq
    // The live price is the core's own quote (Orders.quote): the same numbers the order will charge.
    bridge
      .quoteOrder(rid(get), {
        productId: draft.productId,
        domain: draft.domain.trim() || undefined,
        period: draft.period,
        sanCount: draft.sanCount,
        sanWildcardCount: draft.sanWildcardCount,
        contactEmail: draft.contactEmail.trim() || undefined
      })
      .then((quote) => seq === quoteSeq && set({ quote, quoteError: null }))
      .catch((err: unknown) => seq === quoteSeq && set({ quoteError: errorMessage(err) }))
  },
  async submitOrder() {
    const d = get().draft
    if (d.productId === null) return null
    set({ submitting: true, submitError: null })
    try {
      const r = await bridge.createOrder(
        rid(get),
        {
          productId: d.productId,
          domain: d.domain.trim(),
          period: d.period,
          sanCount: d.sanCount,
          sanWildcardCount: d.sanWildcardCount,
          contactEmail: d.contactEmail.trim() || undefined
        },
        d.payment
      )
      // Only a placed order clears the form; on an error everything typed stays. The new order's
      // page starts empty: nothing of the order looked at before carries over.
      set({
        submitting: false,
        draft: { ...emptyDraft, productId: d.productId, period: d.period },
        quote: null,
        ...freshOrderState(r.order.id),
        order: r.order
      })
      get().toast('ok', `Order ${r.order.orderNumber} placed`)
      void get().refreshResellers()
      void get().setListFilter('orders', get().orders.filter)
      return r.order
    } catch (err) {
      set({ submitting: false, submitError: errorMessage(err) })
      return null
    }
  }
})

const keysSlice: Slice<KeysSlice> = (set, get) => ({
  apiKeys: [],
  shownKey: null,
  async loadKeys() {
    try {
      set({ apiKeys: await bridge.listApiKeys(rid(get)) })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async createKey(label) {
    try {
      const { key, info } = await bridge.createApiKey(rid(get), label)
      set({ shownKey: { id: info.id, key }, apiKeys: [info, ...get().apiKeys] })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async copyKey(id) {
    try {
      const { key } = await bridge.revealApiKey(rid(get), id)
      await navigator.clipboard.writeText(key)
      get().toast('ok', 'API key copied to the clipboard')
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  async revokeKey(id) {
    try {
      const info = await bridge.revokeApiKey(rid(get), id)
      set({
        apiKeys: get().apiKeys.map((k) => (k.id === id ? info : k)),
        shownKey: get().shownKey?.id === id ? null : get().shownKey
      })
      get().toast('ok', `API key ${info.prefix}… revoked`)
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  },
  hideKey() {
    set({ shownKey: null })
  }
})

const RECENT_RUNS = 20

const deploySlice: Slice<DeploySlice> = (set, get) => ({
  deployOrderId: null,
  deployTargets: [],
  deployRuns: [],
  deployError: null,
  deploying: [],
  async loadDeploys(orderId) {
    if (get().deployOrderId !== orderId)
      set({ deployOrderId: orderId, deployTargets: [], deployRuns: [], deployError: null })
    try {
      const r = rid(get)
      const [targets, runs] = await Promise.all([
        bridge.listDeployTargets(r, orderId),
        bridge.listDeployRuns(r, orderId, { limit: RECENT_RUNS, offset: 0 })
      ])
      if (get().deployOrderId === orderId) set({ deployTargets: targets, deployRuns: runs.items, deployError: null })
    } catch (err) {
      if (get().deployOrderId === orderId) set({ deployError: errorMessage(err) })
    }
  },
  async addDeployTarget(orderId, input) {
    try {
      const created = await bridge.addDeployTarget(rid(get), orderId, input)
      get().toast('ok', `Deploy target added (${created.target.kind})`)
      void get().loadDeploys(orderId)
      return created
    } catch (err) {
      return errorMessage(err)
    }
  },
  async removeDeployTarget(orderId, targetId) {
    try {
      await bridge.removeDeployTarget(rid(get), orderId, targetId)
      get().toast('ok', 'Deploy target removed')
      await get().loadDeploys(orderId)
    } catch (err) {
      if (get().deployOrderId === orderId) set({ deployError: errorMessage(err) })
    }
  },
  async deployNow(orderId) {
    set({ deploying: [...get().deploying, orderId], deployError: null })
    try {
      const runs = await bridge.deployNow(rid(get), orderId)
      const failed = runs.filter((r) => r.status === 'failed').length
      get().toast(
        failed ? 'error' : 'ok',
        failed ? `${failed} of ${runs.length} deploys failed` : `Deployed to ${runs.length} target(s)`
      )
    } catch (err) {
      if (get().deployOrderId === orderId) set({ deployError: errorMessage(err) })
    } finally {
      set({ deploying: get().deploying.filter((id) => id !== orderId) })
      // Only the page still showing this order reloads; another order's page keeps its own runs.
      if (get().deployOrderId === orderId) await get().loadDeploys(orderId)
    }
  }
})

const acmeSlice: Slice<AcmeSlice> = (set, get) => ({
  acmeSubscriptions: [],
  acmeError: null,
  acmeKeys: {},
  async loadAcme() {
    try {
      set({ acmeSubscriptions: await bridge.listAcmeSubscriptions(rid(get)), acmeError: null, acmeKeys: {} })
    } catch (err) {
      set({ acmeSubscriptions: [], acmeError: errorMessage(err) })
    }
  },
  async revealAcmeKey(orderId) {
    try {
      const revealed = await bridge.acmeHmacKey(rid(get), orderId)
      set({ acmeKeys: { ...get().acmeKeys, [orderId]: revealed } })
    } catch (err) {
      get().toast('error', errorMessage(err))
    }
  }
})

export const useStore = create<Store>()((...a) => ({
  ...sessionSlice(...a),
  ...dashboardSlice(...a),
  ...catalogueSlice(...a),
  ...listsSlice(...a),
  ...orderSlice(...a),
  ...draftSlice(...a),
  ...keysSlice(...a),
  ...deploySlice(...a),
  ...acmeSlice(...a)
}))

// Any call the server refuses for want of a session switches the whole UI to the sign-in-needed screen.
onSignedOut((message) => useStore.setState({ signedOut: message }))

export const useReseller = (): ResellerView | null =>
  useStore((s) => s.resellers.find((r) => r.id === s.resellerId) ?? null)
