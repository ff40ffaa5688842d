/**
 * The building blocks of the shared records (records.ts): literal sets, number and text
 * schemas with the reason the bridge gives when a value does not fit them, and paging.
 */
import { Type, type Static, type TLiteral, type TSchema, type TUnion } from '@sinclair/typebox'
import {
  DCV_METHODS,
  DEPLOY_LAYOUTS,
  DEPLOY_RUN_STATUSES,
  DEPLOY_TARGET_KINDS,
  DEPLOY_TRIGGERS,
  INVOICE_STATUSES,
  ORDER_STATUSES,
  PAYMENT_METHODS,
  PAYMENT_STATUSES,
  PRODUCT_TYPES,
  REVOCATION_REASONS,
  VALIDATION_TYPES
} from './constants'

const spoken = (values: readonly string[]): string =>
  values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`

/** One of a literal set; refused with the set spelled out. */
export const OneOf = <const T extends string>(values: readonly T[]): TUnion<TLiteral<T>[]> =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { must: `must be ${spoken(values)}` }
  )
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const Text = Type.String({ must: 'must be text' })
export const Flag = Type.Boolean({ must: 'must be true or false' })
export const WholeNumber = Type.Integer({ must: 'must be a whole number' })
/** A row id: a positive whole number, so a value like `1 OR 1` never reaches a query. */
export const Id = Type.Integer({ minimum: 1, must: 'must be a positive whole number' })
export const Cents = Type.Integer({ must: 'must be a whole number of cents' })
export const Stamp = Type.String()
export const NullableStamp = Nullable(Type.String())

export const ProductType = OneOf(PRODUCT_TYPES)
export const ValidationType = OneOf(VALIDATION_TYPES)
export const OrderStatus = OneOf(ORDER_STATUSES)
export const PaymentStatus = OneOf(PAYMENT_STATUSES)
export const InvoiceStatus = OneOf(INVOICE_STATUSES)
export const PaymentMethod = OneOf(PAYMENT_METHODS)
export const DcvMethod = OneOf(DCV_METHODS)
export const RevocationReason = OneOf(REVOCATION_REASONS)
export const DeployLayout = OneOf(DEPLOY_LAYOUTS)
export const DeployTargetKind = OneOf(DEPLOY_TARGET_KINDS)
export const DeployRunStatus = OneOf(DEPLOY_RUN_STATUSES)
export const DeployTrigger = OneOf(DEPLOY_TRIGGERS)

export type Cents = Static<typeof Cents>
export type ProductType = Static<typeof ProductType>
export type ValidationType = Static<typeof ValidationType>
export type OrderStatus = Static<typeof OrderStatus>
export type PaymentStatus = Static<typeof PaymentStatus>
export type InvoiceStatus = Static<typeof InvoiceStatus>
export type PaymentMethod = Static<typeof PaymentMethod>
export type DcvMethod = Static<typeof DcvMethod>
export type RevocationReason = Static<typeof RevocationReason>
export type DeployLayout = Static<typeof DeployLayout>
export type DeployTargetKind = Static<typeof DeployTargetKind>
export type DeployRunStatus = Static<typeof DeployRunStatus>
export type DeployTrigger = Static<typeof DeployTrigger>

// ---- paging -------------------------------------------------------------------------------

export const PageRequest = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, must: 'must be 1 or more' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, must: 'must be 0 or more' }))
  },
  { must: 'must be { limit, offset }' }
)
export type PageRequest = Static<typeof PageRequest>

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() })
/** One page of a list, newest first, with the total count and the limit actually used. */
export interface Page<T> {
  items: T[]
  total: number
  limit: number
  offset: number
}
