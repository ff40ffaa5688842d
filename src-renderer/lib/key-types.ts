/**
 * The key types the CSR form offers. Kept apart from lib/csr.ts so the form can list them
 * without loading @peculiar/x509 and its ASN.1 stack, which load only when a key is made.
 */
export type KeyType = 'RSA-2048' | 'RSA-3072' | 'RSA-4096' | 'ECDSA-P256' | 'ECDSA-P384'
export const KEY_TYPES: KeyType[] = ['RSA-2048', 'RSA-3072', 'RSA-4096', 'ECDSA-P256', 'ECDSA-P384']
