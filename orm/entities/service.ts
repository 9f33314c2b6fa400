// Service-wide tables (migrations 0001, 0004, 0006): facts that survive restarts, stored answers of
// retried requests, and the login/registration throttles' counters.
//
// Not an entity, and outside what MikroORM 6 describes: the plpgsql function `svc_assert`
// (migration 0004), the ledger postings' postcondition check. The schema generator compares
// tables, columns, indexes, checks and foreign keys only, so the function stays in its migration.
import { EntitySchema, type Opt } from '@mikro-orm/core';
import { bigint, createdAt, instant } from './columns.js';

/** A small service-wide fact that must survive restarts (e.g. the clock anchor). */
export type ServiceMeta = { key: string; value: string; updatedAt: Date };
// Owner: the service's start-up (src/service.ts through orm/meta.ts: the clock anchor), before any actor runs.
export const ServiceMetaSchema = new EntitySchema<ServiceMeta>({
  name: 'ServiceMeta',
  tableName: 'service_meta',
  properties: {
    key: { type: 'text', primary: true },
    value: { type: 'text' },
    updatedAt: instant('updated_at'),
  },
});

/** The first answer to a request carrying an Idempotency-Key, kept ANSWER_RETENTION_HOURS. */
export type Idempotency = {
  scope: string;
  key: string;
  requestHash: string;
  status: number;
  reply: unknown;
  createdAt: Date;
};
// Owner: runtime/answers (actors/runtime/idempotency.ts stores answers in the turn that has the
// effect, the order batch in its write; actors/answers sweeps expired ones).
export const IdempotencySchema = new EntitySchema<Idempotency>({
  name: 'Idempotency',
  tableName: 'idempotency',
  properties: {
    scope: { type: 'text', primary: true },
    key: { type: 'text', primary: true },
    requestHash: { type: 'text', fieldName: 'request_hash' },
    status: { type: 'integer' },
    reply: { type: 'json', columnType: 'jsonb' },
    createdAt: createdAt(),
  },
  indexes: [{ name: 'idempotency_created_at', properties: ['createdAt'] }],
});

/** A throttle counter; `key` = `<limit>:<address>` or `<limit>:<address> <e-mail>`, `expire` in unix milliseconds. */
export type RateLimit = { key: string; points: Opt<number>; expire?: number | null };
// Owner: holder (actors/holder/throttle.ts: one upsert per count, on the turn's instant; rate-limiter-flexible's layout, kept).
export const RateLimitSchema = new EntitySchema<RateLimit>({
  name: 'RateLimit',
  tableName: 'rate_limit',
  properties: {
    key: { type: 'text', primary: true },
    points: { type: 'integer', default: 0 },
    expire: { type: bigint(), nullable: true },
  },
  indexes: [{ name: 'rate_limit_expire', properties: ['expire'] }],
});

/** A receipts signing key (Ed25519, JWK): the newest signs; every public key stays in the JWKS. */
export type SigningKey = { kid: string; publicJwk: unknown; privateJwk: unknown; createdAt: Date };
// Owner: the money kernel (actors/money/receipts.ts: made once at first start under a lock, rotated by a new row).
export const SigningKeySchema = new EntitySchema<SigningKey>({
  name: 'SigningKey',
  tableName: 'signing_key',
  properties: {
    kid: { type: 'text', primary: true },
    publicJwk: { type: 'json', columnType: 'jsonb', fieldName: 'public_jwk' },
    privateJwk: { type: 'json', columnType: 'jsonb', fieldName: 'private_jwk' },
    createdAt: createdAt(),
  },
});

export const serviceEntities = [
  ServiceMetaSchema,
  IdempotencySchema,
  RateLimitSchema,
  SigningKeySchema,
];
