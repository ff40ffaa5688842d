/**
 * Example values of /openapi.json: one story told across the operations (the demo reseller's
 * order 42 for example.com), so a reader can follow an order from placing it to its
 * certificate. Each example is checked against its schema by the description's lint
 * (test/docs/openapi-lint.test.ts).
 */

const order = {
  id: 42,
  order_id: 42,
  order_number: 'ORD-2026-000042',
  product_id: 2,
  product: 'PositiveSSL',
  brand: 'Sectigo',
  type: 'ssl',
  validation_type: 'dv',
  domain: 'example.com',
  san_count: 0,
  san_wildcard_count: 0,
  contact_email: null,
  base_price: 57.72,
  san_total: 0,
  discount_amount: 0,
  total: 57.72,
  currency: 'USD',
  status: 'pending',
  status_note: null,
  payment_status: 'paid',
  invoice_number: 'INV-2026-000042',
  invoice_status: 'paid',
  created_at: '2026-11-23 19:33:11',
  updated_at: '2026-11-23 19:33:11',
  auto_reissue_enabled: true,
  max_validity_days: 200,
  purchase_end_date: '2028-11-23',
  next_reissue_at: '2027-05-28',
  reissue_count: 0,
  cert_valid_from: null,
  cert_valid_till: null,
  period: 24
}

const completedOrder = {
  ...order,
  status: 'completed',
  updated_at: '2026-11-23 19:41:52',
  cert_valid_from: '2026-11-23',
  cert_valid_till: '2027-06-11'
}

const product = {
  id: 2,
  name: 'PositiveSSL',
  brand: 'Sectigo',
  type: 'ssl',
  validation_type: 'dv',
  domain_type: 'single',
  list_price: 39,
  list_pricing: { '1': 39, '2': 72.15, '3': 101.4 },
  reseller_price: 31.2,
  pricing: { '1': 31.2, '2': 57.72, '3': 81.12 },
  max_years: 3,
  warranty: '50000',
  san_enabled: false
}

const sanPricing = {
  product_id: 4,
  product_name: 'PositiveSSL Multi-Domain',
  san_enabled: true,
  wildcard_san_enabled: true,
  included_sans: 2,
  max_sans: 248,
  san_price: 20,
  wildcard_san_price: 96,
  pricing: {
    '1': { san_price: 20, wildcard_san_price: 96 },
    '2': { san_price: 37, wildcard_san_price: 177.6 }
  },
  list_pricing: {
    '1': { san_price: 25, wildcard_san_price: 120 },
    '2': { san_price: 46.25, wildcard_san_price: 222 }
  }
}

const pagination = (total: number) => ({ total, limit: 50, offset: 0 })

const invoice = {
  id: 42,
  invoice_number: 'INV-2026-000042',
  order_id: 42,
  order_number: 'ORD-2026-000042',
  domain: 'example.com',
  product: 'PositiveSSL',
  total: 57.72,
  currency: 'USD',
  status: 'paid',
  due_date: '2026-11-23',
  created_at: '2026-11-23 19:33:11',
  paid_at: '2026-11-23 19:33:11',
  sent_at: null,
  cancelled_at: null
}

const debit = {
  id: 7,
  amount: -57.72,
  type: 'debit',
  description: 'Order ORD-2026-000042 (PositiveSSL, example.com, 24 months)',
  balance_after: 942.28,
  order_id: 42,
  created_at: '2026-11-23 19:33:11'
}

const topUp = {
  id: 1,
  amount: 1000,
  type: 'credit',
  description: 'Top-up',
  balance_after: 1000,
  order_id: null,
  created_at: '2026-11-20 09:00:00'
}

const MD5 = '4C1E94A405A650D9D22931919F612483'
const SHA256 = 'FD340E93A2C85E7B1F0C2A0C55D8D7E0A3B5C8A11E6B6E1F7C9D3A2B4E5F6A7B'

const sslStatus = {
  success: true,
  message: 'CSR accepted; complete the validation below, then GET /ssl/42',
  order_id: 42,
  order_number: 'ORD-2026-000042',
  domain: 'example.com',
  product: 'PositiveSSL',
  status: 'validation_pending',
  status_note: null,
  dcv_method: 'http',
  approver_email: null,
  csr: { common_name: 'example.com', md5: MD5, sha256: SHA256 },
  names: ['example.com'],
  validation: [
    {
      name: 'example.com',
      method: 'http',
      status: 'pending',
      detail: null,
      checked_at: null,
      validated_at: null,
      instructions: {
        method: 'http',
        url: `http://example.com/.well-known/pki-validation/${MD5}.txt`,
        file_name: `${MD5}.txt`,
        file_content: `${SHA256}\ncertdesk.invalid\ndc5ce9a57c7d4c34a581`
      }
    }
  ],
  certificate_issued: false,
  certificate_revoked: false,
  valid_from: null,
  valid_till: null,
  reissue_count: 0,
  next_reissue_at: '2027-05-28',
  purchase_end_date: '2028-11-23',
  // The local CA issues here; an order at an external ACME CA says how its renewals run.
  unattended_renewal: null
}

const issuedStatus = {
  ...sslStatus,
  message: undefined,
  status: 'completed',
  validation: [
    {
      ...sslStatus.validation[0],
      status: 'valid',
      detail: 'the file holds the expected content',
      checked_at: '2026-11-23 19:41:52',
      validated_at: '2026-11-23 19:41:52'
    }
  ],
  certificate_issued: true,
  valid_from: '2026-11-23',
  valid_till: '2027-06-11'
}
delete (issuedStatus as { message?: string }).message

const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIB…\n-----END CERTIFICATE-----\n'
const PEM_CSR = '-----BEGIN CERTIFICATE REQUEST-----\nMIIC…\n-----END CERTIFICATE REQUEST-----\n'

const certificateStatus = {
  order_id: 42,
  domain: 'example.com',
  product: 'PositiveSSL',
  brand: 'Sectigo',
  status: 'completed',
  valid_from: '2026-11-23',
  valid_till: '2027-06-11',
  has_certificate: true,
  has_ca_bundle: true,
  days_remaining: 200,
  is_expired: false,
  auto_reissue_enabled: true,
  max_validity_days: 200,
  next_reissue_at: '2027-05-28',
  purchase_end_date: '2028-11-23',
  reissue_count: 0,
  cert_valid_from: '2026-11-23',
  cert_valid_till: '2027-06-11',
  period: 24,
  serial_number: '0C898FCF5E2A7D3B9A41C6E0F2D8B71A',
  names: ['example.com'],
  revoked: false,
  revoked_at: null,
  revocation_reason: null
}

const acmeSetup = {
  status: 'active',
  category: 'caas',
  domains: [
    { id: 'dom_5EIIOKvYEi-p', name: 'shop.example.com' },
    { id: 'dom_vs7b5EkNweGH', name: 'www.shop.example.com' }
  ],
  subscription: { begin: '2026-11-23', next_renewal: '2027-11-23', end: '2027-11-23' },
  account: {
    eab_kid: 'kid_Jd8sKq2LmZ0x',
    eab_hmac_key: 'c2VjcmV0LWhtYWMta2V5LWtlZXAtaXQtbGlrZS1hLXBhc3N3b3Jk',
    server_url: 'https://localhost:7781/acme/directory',
    status: 'pending',
    accounts: []
  },
  allowed_identifiers: ['shop.example.com', 'www.shop.example.com'],
  dns_persist: [],
  root_ca_url: 'http://127.0.0.1:7780/acme/root-ca.pem',
  commands: {
    root_ca: 'curl -so certdesk-root.pem http://127.0.0.1:7780/acme/root-ca.pem',
    certbot:
      "REQUESTS_CA_BUNDLE=certdesk-root.pem certbot certonly --server https://localhost:7781/acme/directory --eab-kid kid_Jd8sKq2LmZ0x --eab-hmac-key '…' -d shop.example.com -d www.shop.example.com",
    acme_sh:
      "acme.sh --register-account --server https://localhost:7781/acme/directory --ca-bundle certdesk-root.pem --eab-kid kid_Jd8sKq2LmZ0x --eab-hmac-key '…'",
    lego: "LEGO_CA_CERTIFICATES=certdesk-root.pem lego --server https://localhost:7781/acme/directory --eab --kid kid_Jd8sKq2LmZ0x --hmac '…' -d shop.example.com run"
  },
  autoinstall: null
}

const installation = {
  order_id: 42,
  order_number: 'ORD-2026-000042',
  verdict: 'ok',
  label: 'serving the current certificate',
  checked_at: '2026-11-24 08:00:00',
  results: [
    {
      host: 'example.com',
      port: 443,
      verdict: 'ok',
      label: 'serving the current certificate',
      detail: 'example.com:443 serves serial 0C898FCF5E2A7D3B9A41C6E0F2D8B71A, valid till 2027-06-11 23:59:59',
      served_serial: '0C898FCF5E2A7D3B9A41C6E0F2D8B71A',
      served_valid_till: '2027-06-11 23:59:59',
      checked_at: '2026-11-24 08:00:00'
    }
  ]
}

export const EXAMPLES = {
  order,
  completedOrder,
  product,
  sanPricing,
  pagination,
  invoice,
  debit,
  topUp,
  sslStatus,
  issuedStatus,
  certificateStatus,
  acmeSetup,
  installation,
  PEM_CERT,
  PEM_CSR
}
