/**
 * The ACME server's door to @peculiar/x509: its ASN.1 decorators need the Reflect metadata API
 * loaded first (the library's README, "Installation"), and it signs with Node's WebCrypto.
 */
import 'reflect-metadata'
import { webcrypto } from 'node:crypto'
import * as x509 from '@peculiar/x509'

x509.cryptoProvider.set(webcrypto as never)

export { x509 }
