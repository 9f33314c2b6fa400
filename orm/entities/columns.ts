// Column shapes the entities share, so each is spelled once. The migrations are the truth of the
// schema; test/api/orm-schema.test.ts keeps every entity equal to the migrated database.
import { ArrayType, BigIntType } from '@mikro-orm/core';

/** bigint as a JS number: ids, ticks and cents stay far below 2^53 (ids are asserted safe where SQL is built). */
export const bigint = () => new BigIntType('number');

/** A bigserial primary key. */
export const serialId = () => ({ type: bigint(), primary: true, autoincrement: true }) as const;

/**
 * `timestamptz not null`, no default: every insert gives the instant, from the service's Clock
 * (ARCHITECTURE rule 7); an insert that forgets it fails instead of taking the database's clock.
 */
export const createdAt = () => instant('created_at');

/** A `timestamptz not null` column named `fieldName` with no default: the writer gives the service clock's instant. */
export const instant = (fieldName: string) =>
  ({ type: 'Date', columnType: 'timestamptz', fieldName }) as const;

/** A nullable `timestamptz` column named `fieldName`. */
export const timestampNull = (fieldName: string) =>
  ({ type: 'Date', columnType: 'timestamptz', fieldName, nullable: true }) as const;

/** `integer[]`, read as numbers. */
export const intArray = () => new ArrayType<number>((i) => Number(i));
