/**
 * The one door to @peculiar/x509 for the core. The library's ASN.1 schema decorators need the
 * Reflect metadata API loaded before it (@peculiar/x509's README, "Installation"), and every call here takes
 * the crypto provider as a parameter instead of the library's global (so tests and
 * callers choose the provider, as the library's own tests do).
 */
import 'reflect-metadata'
import { webcrypto } from 'node:crypto'

export * as x509 from '@peculiar/x509'

/** A WebCrypto implementation: Node's in the main process, the browser's in the renderer. */
export type CryptoProvider = webcrypto.Crypto
export type CryptoKey = webcrypto.CryptoKey
export type CryptoKeyPair = webcrypto.CryptoKeyPair
export type EcdsaParams = webcrypto.EcdsaParams

/** Node's WebCrypto, the default provider of the main process. */
export const nodeCrypto: CryptoProvider = webcrypto
