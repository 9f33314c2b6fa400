// Column shapes the entities share, so each is spelled once. The migrations are the truth of the
// schema; test/api/orm-schema.test.ts keeps every entity equal to the migrated database.
import { ArrayType, BigIntType } from '@mikro-orm/core';

/** bigint as a JS number: ids, ticks and cents stay far below 2^53 (ids are asserted safe where SQL is built). */
export const bigint = () => new BigIntType('number');

/** A bigserial primary key. */
export const serialId = () => ({ type: bigint(), primary: true, autoincrement: true }) as const;

/** `timestamptz not null default now()`: set by the database on insert. */
export const createdAt = () => ({ type: 'Date', columnType: 'timestamptz', fieldName: 'created_at', defaultRaw: 'now()' }) as const;

/** A nullable `timestamptz` column named `fieldName`. */
export const timestampNull = (fieldName: string) => ({ type: 'Date', columnType: 'timestamptz', fieldName, nullable: true }) as const;

/** `integer[]`, read as numbers. */
export const intArray = () => new ArrayType<number>((i) => Number(i));
