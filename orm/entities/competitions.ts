// Competitions (migration 0012, CONTRACT.md "Competitions"): market windows and holders' entries,
// each entry with its competition account (simulated USD only).
import { EntitySchema, type Opt, type Ref } from '@mikro-orm/core';
import { bigint, createdAt, timestampNull } from './columns.js';
import { AccountSchema, HolderSchema, ref, type Account, type Holder } from './trading.js';

export const COMPETITION_STATUSES = ['running', 'finished'] as const;

/** One competition window of one market; times in real unix seconds. */
export type Competition = {
  id: string;
  market: string;
  name: string;
  startsAt: number;
  endsAt: number;
  startingBalanceCents: number;
  prizePoolCents: number;
  sponsor: string;
  status: Opt<(typeof COMPETITION_STATUSES)[number]>;
  finishedAt?: Date | null;
  createdAt: Date;
};
// Owner: competition (actors/competition/actor.ts: opens a window, finishes it once with its prizes).
export const CompetitionSchema = new EntitySchema<Competition>({
  name: 'Competition',
  tableName: 'competition',
  properties: {
    id: { type: 'text', primary: true },
    market: { type: 'text' },
    name: { type: 'text' },
    startsAt: { type: 'double', runtimeType: 'number', fieldName: 'starts_at' },
    endsAt: { type: 'double', runtimeType: 'number', fieldName: 'ends_at' },
    startingBalanceCents: { type: bigint(), fieldName: 'starting_balance_cents' },
    prizePoolCents: { type: bigint(), fieldName: 'prize_pool_cents' },
    sponsor: { type: 'text' },
    status: {
      enum: true,
      items: [...COMPETITION_STATUSES],
      columnType: 'text',
      default: 'running',
    },
    finishedAt: timestampNull('finished_at'),
    createdAt: createdAt(),
  },
  checks: [
    { name: 'competition_starting_balance_cents_check', expression: 'starting_balance_cents > 0' },
    { name: 'competition_prize_pool_cents_check', expression: 'prize_pool_cents >= 0' },
    { name: 'competition_window', expression: 'ends_at > starts_at' },
  ],
  indexes: [{ name: 'competition_market', properties: ['market', 'endsAt'] }],
});

/** A holder's entry: its competition account, and its prize once paid. */
export type CompetitionEntry = {
  account: Ref<Account>;
  competition: Ref<Competition>;
  holder: Ref<Holder>;
  prizeCents?: number | null;
  createdAt: Date;
};
// Owner: competition (actors/competition/actor.ts: join makes the entry and its account).
export const CompetitionEntrySchema = new EntitySchema<CompetitionEntry>({
  name: 'CompetitionEntry',
  tableName: 'competition_entry',
  properties: {
    account: ref(() => AccountSchema, 'account_id', 'competition_entry', { primary: true }),
    competition: ref(() => CompetitionSchema, 'competition_id', 'competition_entry'),
    holder: ref(() => HolderSchema, 'holder_id', 'competition_entry'),
    prizeCents: { type: bigint(), fieldName: 'prize_cents', nullable: true },
    createdAt: createdAt(),
  },
  indexes: [
    {
      name: 'competition_entry_holder',
      expression:
        'create unique index competition_entry_holder on competition_entry (competition_id, holder_id)',
    },
  ],
});

export const competitionEntities = [CompetitionSchema, CompetitionEntrySchema];
