import { Type } from '@sinclair/typebox'

/** Every 4xx/5xx answer is the failure envelope. */
export const ErrorRef = {
  '4xx': Type.Ref('ErrorEnvelope'),
  '5xx': Type.Ref('ErrorEnvelope')
}

/** The `Idempotency-Key` request header of POST /orders and POST /credits. */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({ description: 'a retry with the same key and body returns the first answer and charges once' })
  )
})
