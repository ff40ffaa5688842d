/**
 * What /openapi.json says of each operation beyond its schemas: the statuses it really answers
 * besides those every operation can (STATUSES_OF_EVERY_OPERATION), each with an example error,
 * and example requests and answers. The routes declare what is checked at run time; this
 * table is read only to describe them, and test/docs/openapi-replay.test.ts holds it to what
 * a live server answers, through a validating proxy.
 */
import { EXAMPLES as X } from './examples'

/** Statuses beyond those of every operation, each with the error a script would read. */
export type OperationErrors = Partial<Record<400 | 402 | 403 | 404 | 409 | 429, string>>

export interface OperationDoc {
  /** What a 200 means, in the user's words. */
  ok: string
  /** An answer as the server gives it. */
  answer: unknown
  /** A request body, for operations that take one. */
  request?: unknown
  errors: OperationErrors
  /** Answers `Idempotent-Replayed` on a replay (the operation takes an Idempotency-Key). */
  idempotent?: boolean
  /** No API key needed (the public root certificate). */
  public?: boolean
}

const NO_GROUP = 'your reseller account has no reseller group; ask the administrator to assign one'
const unknownParameter = (op: string, takes: string) =>
  `invalid request: unknown query parameter "sort"; ${op} takes ${takes}`
const PAGING_400 = 'invalid request: offset must be <= 9007199254740991'
const orderNotFound = 'order 4242 not found'

export const OPERATIONS: Record<string, OperationDoc> = {
  listProducts: {
    ok: 'The products of your group with your prices',
    answer: {
      success: true,
      products: [X.product],
      count: 1,
      group_id: 1,
      note: 'Prices are the Standard group prices in USD per subscription length in years; add include=acme for ACME subscriptions'
    },
    errors: {
      400: unknownParameter('GET /products', 'brand, type, validation, include'),
      403: NO_GROUP
    }
  },
  getProduct: {
    ok: 'The product with its description and every price',
    answer: {
      success: true,
      product: {
        ...X.product,
        description: 'Domain-validated certificate for one name and its www form',
        wildcard_san_enabled: false,
        included_sans: 0,
        max_sans: 0,
        san_pricing: {
          ...X.sanPricing,
          product_id: 2,
          product_name: 'PositiveSSL',
          san_enabled: false,
          wildcard_san_enabled: false,
          included_sans: 0,
          max_sans: 0,
          san_price: 0,
          wildcard_san_price: 0,
          pricing: { '1': { san_price: 0, wildcard_san_price: 0 } },
          list_pricing: { '1': { san_price: 0, wildcard_san_price: 0 } }
        }
      }
    },
    errors: {
      400: 'invalid request: id must be integer',
      403: 'product 7 is not available to your reseller group',
      404: 'product 99 not found'
    }
  },
  getSanPricing: {
    ok: 'The SAN prices of the product',
    answer: { success: true, san_pricing: X.sanPricing },
    errors: {
      400: 'invalid request: product_id must be >= 1',
      403: 'product 7 is not available to your reseller group',
      404: 'product 99 not found'
    }
  },
  listOrders: {
    ok: 'One page of your orders',
    answer: { success: true, orders: [X.order], pagination: X.pagination(1) },
    errors: { 400: PAGING_400 }
  },
  createOrder: {
    ok: 'The order is placed and paid; `fulfillment` tells a certificate order from an ACME subscription',
    request: { product_id: 2, domain: 'example.com', period: 24 },
    answer: {
      success: true,
      message: 'Order ORD-2026-000042 created and paid from credit',
      fulfillment: 'certificate',
      order_id: 42,
      order_number: 'ORD-2026-000042',
      domain: 'example.com',
      base_price: 57.72,
      san_total: 0,
      discount_amount: 0,
      total: 57.72,
      status: 'pending',
      payment_status: 'paid',
      credit_used: 57.72,
      new_balance: 942.28,
      invoice_number: 'INV-2026-000042',
      auto_reissue_enabled: true,
      max_validity_days: 200,
      purchase_end_date: '2028-11-23',
      next_reissue_at: '2027-05-28',
      period: 24
    },
    idempotent: true,
    errors: {
      400: 'period must be 12, 24, 36 months for PositiveSSL',
      402: 'insufficient credit balance: required 2069.60 USD, available 942.28 USD',
      403: NO_GROUP,
      404: 'product 999 not found',
      409: 'Idempotency-Key was already used with a different request'
    }
  },
  getOrder: {
    ok: 'The order',
    answer: { success: true, order: X.order },
    errors: { 400: 'invalid request: id must be <= 9007199254740991', 404: orderNotFound }
  },
  cancelOrder: {
    ok: 'The order is cancelled and what was paid is back on your balance',
    request: { action: 'cancel' },
    answer: {
      success: true,
      message: 'Order ORD-2026-000042 cancelled; 57.72 USD refunded to credit',
      order_id: 42,
      status: 'cancelled',
      refunded: 57.72,
      new_balance: 1000,
      order: { ...X.order, status: 'cancelled', payment_status: 'refunded', invoice_status: 'cancelled' }
    },
    errors: {
      400: 'invalid request: action must be one of cancel',
      404: orderNotFound,
      409: 'order ORD-2026-000042 is completed; only pending or processing orders can be cancelled'
    }
  },
  getAcmeSubscription: {
    ok: 'The set-up of the subscription; account.eab_hmac_key is a secret',
    answer: { success: true, acme: X.acmeSetup },
    errors: { 400: 'invalid request: order_id must be >= 1', 404: 'order 42 has no ACME subscription' }
  },
  getRootCertificate: {
    ok: 'The CertDesk root certificate, PEM',
    answer: X.PEM_CERT,
    public: true,
    errors: {}
  },
  decodeCsr: {
    ok: 'What the CSR asks for',
    request: { csr: X.PEM_CSR },
    answer: {
      success: true,
      csr: {
        domain: 'example.com',
        common_name: 'example.com',
        organization: null,
        organizational_unit: null,
        locality: null,
        state: null,
        country: null,
        email: null,
        sans: ['example.com'],
        key_algorithm: 'ECDSA',
        key_size: null,
        curve: 'P-256',
        signature_algorithm: 'ecdsa-with-SHA256',
        signature_valid: true,
        md5: X.sslStatus.csr.md5,
        sha256: X.sslStatus.csr.sha256
      }
    },
    errors: { 400: 'could not decode CSR: expected a PEM block starting with -----BEGIN CERTIFICATE REQUEST-----' }
  },
  configureSsl: {
    ok: 'The CSR is accepted; each name has its validation instructions',
    request: { order_id: 42, csr: X.PEM_CSR, dcv_method: 'http' },
    answer: X.sslStatus,
    errors: {
      400: 'the CSR names www.example.org, which order ORD-2026-000042 does not cover',
      404: orderNotFound,
      409: 'could not configure order ORD-2026-000042: it is validation_pending; only a pending order takes a CSR (use /ssl/change-dcv or /ssl/reissue)',
      429: 'too many approval emails for order ORD-2026-000042; try again in 1800 seconds'
    }
  },
  getSslStatus: {
    ok: 'Where validation and issuance stand; the certificate is issued once every name is valid',
    answer: { ...X.issuedStatus },
    errors: { 400: 'invalid request: order_id must be integer', 404: orderNotFound }
  },
  changeDcvMethod: {
    ok: 'The remaining names have new instructions',
    request: { order_id: 42, dcv_method: 'dns' },
    answer: {
      ...X.sslStatus,
      message: 'Validation method changed to dns; complete the validation below, then GET /ssl/42',
      dcv_method: 'dns',
      validation: [
        {
          ...X.sslStatus.validation[0],
          method: 'dns',
          instructions: {
            method: 'dns',
            record_name: `_${X.sslStatus.csr.md5.toLowerCase()}.example.com`,
            record_type: 'CNAME',
            record_value: `${X.sslStatus.csr.sha256.slice(0, 32)}.${X.sslStatus.csr.sha256.slice(32)}.certdesk.invalid`,
            txt_alternative: X.sslStatus.csr.sha256
          }
        }
      ]
    },
    errors: {
      400: 'invalid request: dcv_method must be one of email, http, https, dns',
      404: orderNotFound,
      409: 'could not change the validation method of order ORD-2026-000042: it is completed, not validation_pending',
      429: 'too many approval emails for order ORD-2026-000042; try again in 1800 seconds'
    }
  },
  resendValidationEmail: {
    ok: 'The approval emails went out again with new codes',
    request: { order_id: 42 },
    answer: {
      ...X.sslStatus,
      message: 'Approval email sent again with a new code',
      dcv_method: 'email',
      approver_email: 'admin@example.com',
      validation: [
        {
          ...X.sslStatus.validation[0],
          method: 'email',
          instructions: { method: 'email', approver_email: 'admin@example.com', sent_at: '2026-11-23 19:35:02' }
        }
      ]
    },
    errors: {
      400: 'invalid request: body has an unknown field "orderid"',
      404: orderNotFound,
      409: 'could not resend validation for order ORD-2026-000042: its method is http, not email; nothing is sent for http',
      429: 'too many approval emails for order ORD-2026-000042; try again in 1800 seconds'
    }
  },
  approveValidationEmail: {
    ok: 'The approval is recorded; when every name is valid the certificate is issued',
    request: { order_id: 42, code: 'K7QP2M9XWD' },
    answer: { ...X.issuedStatus, message: 'Approval recorded; the certificate is issued' },
    errors: {
      400: 'could not record approval: the code does not match a pending approval of this order',
      404: orderNotFound,
      409: 'could not record approval for order ORD-2026-000042: it is completed, not validation_pending'
    }
  },
  reissueCertificate: {
    ok: 'The reissue is accepted: issued at once, or waiting for validation of what changed',
    request: { order_id: 42 },
    answer: { ...X.issuedStatus, message: 'Reissue accepted; the certificate is issued', reissue_count: 0 },
    errors: {
      400: 'could not decode CSR: the PEM body is not base64',
      404: orderNotFound,
      409: 'could not reissue order ORD-2026-000042: it has no active certificate (status pending)',
      429: 'could not reissue order ORD-2026-000042: it was reissued 3 times within 60 minutes, the most allowed; try again in 1714 seconds (after 2026-11-23 20:12:30 UTC)'
    }
  },
  revokeCertificate: {
    ok: 'The certificate is revoked; its status says so',
    request: { order_id: 42, reason: 'keyCompromise' },
    answer: {
      success: true,
      message: `Certificate ${X.certificateStatus.serial_number} revoked (keyCompromise)`,
      certificate: {
        ...X.certificateStatus,
        next_reissue_at: null,
        revoked: true,
        revoked_at: '2026-11-24 09:00:00',
        revocation_reason: 'keyCompromise'
      }
    },
    errors: {
      400: 'invalid request: reason must be equal to one of the allowed values',
      404: orderNotFound,
      409: `could not revoke certificate ${X.certificateStatus.serial_number}: it was revoked on 2026-11-24 09:00:00 (keyCompromise)`
    }
  },
  getCertificateStatus: {
    ok: "The order's certificate status",
    answer: { success: true, certificate: X.certificateStatus },
    errors: { 400: 'invalid request: order_id must be integer', 404: orderNotFound }
  },
  downloadCertificate: {
    ok: 'The certificate and its CA bundle, PEM',
    answer: {
      success: true,
      certificate: {
        order_id: 42,
        domain: 'example.com',
        valid_from: '2026-11-23',
        valid_till: '2027-06-11',
        serial_number: X.certificateStatus.serial_number,
        certificate_pem: X.PEM_CERT,
        ca_bundle: X.PEM_CERT,
        private_key_note:
          'The private key was created with the CSR on your side and was never sent to CertDesk; it is not returned here.',
        revoked: false
      }
    },
    errors: {
      400: 'invalid request: order_id must be integer',
      404: 'certificate for order ORD-2026-000042 not found: none has been issued yet (status pending)'
    }
  },
  listInvoices: {
    ok: 'One page of your invoices',
    answer: { success: true, invoices: [X.invoice], pagination: X.pagination(1) },
    errors: { 400: 'invalid request: status must be one of unpaid, paid, cancelled, sent' }
  },
  getInvoice: {
    ok: 'The invoice',
    answer: { success: true, invoice: X.invoice },
    errors: { 400: 'invalid request: id must be integer', 404: 'invoice 4242 not found' }
  },
  listCreditTransactions: {
    ok: 'Your balance and one page of its history',
    answer: {
      success: true,
      balance: 942.28,
      currency: 'USD',
      transactions: [X.debit, X.topUp],
      pagination: X.pagination(2)
    },
    errors: { 400: unknownParameter('GET /credits', 'limit, offset').replace('"sort"', '"type"') }
  },
  payOrderFromCredit: {
    ok: 'The order is paid from your credit',
    request: { order_id: 43 },
    answer: {
      success: true,
      message: 'Order ORD-2026-000043 paid from credit',
      order_id: 43,
      amount_paid: 31.2,
      new_balance: 911.08
    },
    idempotent: true,
    errors: {
      400: 'invalid request: order_id must be integer',
      402: 'insufficient credit balance: required 31.20 USD, available 12.00 USD',
      404: 'order 4242 not found',
      409: 'order ORD-2026-000042 is already paid'
    }
  },
  getBalance: {
    ok: 'Your balance and its last 10 transactions',
    answer: { success: true, balance: 942.28, currency: 'USD', transactions: [X.debit, X.topUp] },
    errors: {}
  },
  getAccount: {
    ok: 'Your account',
    answer: {
      success: true,
      reseller: {
        id: 1,
        name: 'Demo Reseller',
        email: 'demo@example.com',
        company: 'Demo Hosting Ltd',
        discount_rate: 0,
        credit_balance: 942.28,
        group_id: 1,
        group_name: 'Standard',
        api_access: true,
        created_at: '2026-11-20 09:00:00',
        stats: { order_count: 1, total_revenue: 57.72 }
      }
    },
    errors: {}
  },
  getStats: {
    ok: 'Your statistics and chart data',
    answer: {
      success: true,
      stats: {
        total_orders: 1,
        active_orders: 1,
        pending_orders: 0,
        total_revenue: 57.72,
        monthly_revenue: 57.72,
        credit_balance: 942.28
      },
      charts: {
        daily_sales: [{ date: '2026-11-23', orders: 1, revenue: 57.72 }],
        brand_distribution: [{ brand: 'Sectigo', count: 1 }],
        status_distribution: { completed: 1, pending: 0, processing: 0, cancelled: 0 }
      }
    },
    errors: {}
  },
  listEvents: {
    ok: 'One page of your event log',
    answer: {
      success: true,
      events: [
        {
          id: 3,
          type: 'certificate.issued',
          order_id: 42,
          order_number: 'ORD-2026-000042',
          message: 'Certificate 0C898FCF5E2A7D3B9A41C6E0F2D8B71A issued for example.com',
          data: { serial: '0C898FCF5E2A7D3B9A41C6E0F2D8B71A', valid_till: '2027-06-11 23:59:59' },
          created_at: '2026-11-23 19:41:52'
        }
      ],
      pagination: X.pagination(1)
    },
    errors: { 400: 'since must be a day (YYYY-MM-DD) or a UTC timestamp (YYYY-MM-DD HH:MM:SS)' }
  },
  getInstallation: {
    ok: 'The newest check of each name and endpoint',
    answer: { success: true, installation: X.installation },
    errors: { 400: 'invalid request: order_id must be integer', 404: orderNotFound }
  },
  checkInstallation: {
    ok: 'The results of the check just made',
    answer: { success: true, installation: X.installation },
    errors: {
      400: 'could not check order ORD-2026-000042: it has no certificate yet',
      404: orderNotFound
    }
  },
  listExpiringCertificates: {
    ok: 'Your certificates that end within the window, soonest first',
    answer: {
      success: true,
      certificates: [
        {
          kind: 'issued',
          reference: 'ORD-2026-000042',
          order_id: 42,
          imported_id: null,
          domain: 'example.com',
          valid_till: '2027-06-11 23:59:59',
          days_left: 12,
          renewal_planned_at: '2027-05-28',
          contact: 'demo@example.com'
        }
      ]
    },
    errors: { 400: 'invalid request: days must be <= 398' }
  },
  getOrderRenewal: {
    ok: 'How the order renews',
    answer: {
      success: true,
      renewal: {
        window: {
          source: 'default',
          source_detail: '14 days before the certificate ends',
          cert_id: 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE',
          window_start: '2027-05-28 00:00:00',
          window_end: '2027-06-11 23:59:59',
          renew_at: '2027-05-28 00:00:00',
          explanation_url: null,
          checked_at: '2026-11-23 19:41:52',
          next_check_at: null,
          last_error: null
        },
        delegation: null,
        dns_persist: [],
        unattended: null
      }
    },
    errors: { 400: 'invalid request: order_id must be integer', 404: orderNotFound }
  },
  switchOrderRenewalMethod: {
    ok: "The order's renewals now validate over the method asked for",
    request: { dcv_method: 'dns' },
    answer: {
      success: true,
      renewal: {
        window: null,
        delegation: {
          zone: 'acme.reseller.example',
          domains: [
            {
              domain: 'example.com',
              cname: {
                name: '_acme-challenge.example.com',
                type: 'CNAME',
                value: 'd5bc87b784a8df19e1cefd505.acme.reseller.example'
              },
              in_place: false,
              detail:
                'no CNAME at _acme-challenge.example.com yet (ENODATA); the customer must set _acme-challenge.example.com CNAME d5bc87b784a8df19e1cefd505.acme.reseller.example'
            }
          ]
        },
        dns_persist: [],
        unattended: {
          method: 'delegated-dns',
          unattended: true,
          detail:
            "renews with nobody once _acme-challenge of each name is a CNAME to this reseller's target (set once)",
          alternatives: [],
          switch_with: null
        }
      }
    },
    errors: {
      400: 'invalid request: dcv_method must be one of dns, http',
      404: orderNotFound,
      409: 'could not change how order ORD-2026-000042 renews: it is pending; it needs a certificate first (POST /ssl/configure)'
    }
  },
  getOpenApiDescription: {
    ok: 'This description, OpenAPI 3.0',
    answer: { openapi: '3.0.3', info: { title: 'CertDesk reseller API', version: '3.0' }, paths: {} },
    errors: {}
  }
}
