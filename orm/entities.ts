// Entities of the system of record. Declared as EntitySchema (no decorators, no reflection) so the
// compiled workers need nothing but the driver. Hot paths use set-based SQL on the same tables.
import { EntitySchema } from '@mikro-orm/core';

export type ServiceMeta = { key: string; value: string; updatedAt: Date };
export const ServiceMetaSchema = new EntitySchema<ServiceMeta>({
  name: 'ServiceMeta',
  tableName: 'service_meta',
  properties: {
    key: { type: 'text', primary: true },
    value: { type: 'text' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', onCreate: () => new Date(), onUpdate: () => new Date() },
  },
});

/** One row per (market, tick) ever opened; closed_at set exactly once by the market's close. */
export type MarketSession = { market: string; tick: number; openedAt: Date; closedAt?: Date | null };
export const MarketSessionSchema = new EntitySchema<MarketSession>({
  name: 'MarketSession',
  tableName: 'market_session',
  properties: {
    market: { type: 'text', primary: true },
    tick: { type: 'bigint', primary: true, mapToPk: false },
    openedAt: { type: 'Date', fieldName: 'opened_at' },
    closedAt: { type: 'Date', fieldName: 'closed_at', nullable: true },
  },
});

/** A throttle counter (actors/holder/throttle.ts); rows are written by rate-limiter-flexible's SQL. */
export type RateLimit = { key: string; points: number; expire?: string | null };
export const RateLimitSchema = new EntitySchema<RateLimit>({
  name: 'RateLimit',
  tableName: 'rate_limit',
  properties: {
    key: { type: 'text', primary: true },
    points: { type: 'integer', default: 0 },
    expire: { type: 'bigint', nullable: true },
  },
});

export const entities = [ServiceMetaSchema, MarketSessionSchema, RateLimitSchema];
