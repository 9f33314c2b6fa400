// Read tasks building the record's answers session by session (messages.ts FragmentSpec): each
// session's items serialised once, so the front end can keep settled sessions' bytes and answer
// a range by concatenating them. The items are the very rows the whole-range read tasks serve.
import { createHash } from 'node:crypto';
import { csvLine } from '../../src/analytics/dataset.js';
import { defineReads, type ReadContext } from '../runtime/read.js';
import type { FragmentSpec, FragmentsArgs, FragmentsReply, SessionFragment } from './messages.js';
import { historySessions, rangeTrades, recordedTicks } from './history.js';
import { tapeRows } from './analytics-tape.js';
import { statsRows } from './analytics-stats.js';
import { datasetRows } from './trades.js';
import { tradeJson } from './trade-json.js';

const digest = (text: string) => createHash('sha1').update(text).digest('base64');

/** Groups items by session: a list per tick from..to. */
function perTick<T>(from: number, to: number, items: T[], tickOf: (x: T) => number): T[][] {
  const out: T[][] = Array.from({ length: to - from + 1 }, () => []);
  for (const x of items) out[tickOf(x) - from]?.push(x);
  return out;
}

function fragment(tick: number, recorded: boolean, text: string, items: number): SessionFragment {
  return { tick, recorded, text, digest: digest(text), items };
}

/**
 * A session's JSON items, comma-joined: the array's JSON without its brackets, in one call (one
 * string, not one per row and then their join: less to collect when a cold read builds 250 sessions).
 */
function jsonItems(rows: readonly unknown[]): string {
  return JSON.stringify(rows).slice(1, -1);
}

/** One fragment per session from..to, built from its tick and its index in the range. */
function eachTick(
  from: number,
  to: number,
  f: (tick: number, i: number) => SessionFragment,
): SessionFragment[] {
  return Array.from({ length: to - from + 1 }, (_, i) => f(from + i, i));
}

type Spec<K extends FragmentSpec['kind']> = Extract<FragmentSpec, { kind: K }>;
type Series<K extends FragmentSpec['kind']> = FragmentsArgs & { spec: Spec<K> };

/** Every fragment of sessions a.from..a.to of a series. */
export async function buildFragments(ctx: ReadContext, a: FragmentsArgs): Promise<FragmentsReply> {
  if (a.to < a.from) return [];
  const { spec } = a;
  switch (spec.kind) {
    case 'history':
      return historyFragments(ctx, { ...a, spec });
    case 'stats':
      return statsFragments(ctx, { ...a, spec });
    case 'tape':
      return tapeFragments(ctx, { ...a, spec });
    case 'dataset':
      return datasetFragments(ctx, { ...a, spec });
    case 'trades':
      return tradesFragments(ctx, { ...a, spec });
  }
}

async function historyFragments(
  { em, seed }: ReadContext,
  { spec, from, to, lastSettled }: Series<'history'>,
): Promise<FragmentsReply> {
  const sessions = await historySessions(em, seed, {
    market: spec.market,
    from,
    to,
    lastSettled,
    includeBundle: spec.includeBundle,
    oracle: spec.oracle,
  });
  return sessions.map((s) => fragment(s.tick, s.recorded, jsonItems(s.rows), s.rows.length));
}

async function statsFragments(
  { em, seed }: ReadContext,
  { spec, from, to }: Series<'stats'>,
): Promise<FragmentsReply> {
  // A row per recorded session: the rows say which sessions are recorded.
  const rows = await statsRows(em, seed, {
    market: spec.market,
    from,
    to,
    oracle: spec.oracle,
  });
  const byTick = perTick(from, to, rows, (r) => r.tick);
  return eachTick(from, to, (tick, i) =>
    fragment(tick, byTick[i].length > 0, jsonItems(byTick[i]), byTick[i].length),
  );
}

async function tapeFragments(
  { em }: ReadContext,
  { spec, from, to, open, lastSettled }: Series<'tape'>,
): Promise<FragmentsReply> {
  // First: a session seen recorded here has all its rows committed for the queries below.
  const recorded = await recordedTicks(em, spec.market, from, to);
  const byTick = perTick(
    from,
    to,
    await tapeRows(em, {
      market: spec.market,
      cluster: spec.cluster,
      from,
      to,
      open,
      lastSettled,
    }),
    (r) => r.tick,
  );
  return eachTick(from, to, (tick, i) =>
    fragment(tick, recorded.has(tick), jsonItems(byTick[i]), byTick[i].length),
  );
}

async function datasetFragments(
  { em, seed }: ReadContext,
  { spec, from, to }: Series<'dataset'>,
): Promise<FragmentsReply> {
  const recorded = await recordedTicks(em, spec.market, from, to);
  const byTick = perTick(
    from,
    to,
    await datasetRows(em, seed, {
      market: spec.market,
      from,
      to,
      split: spec.split,
      expandQty: spec.expandQty,
    }),
    (r) => r.tick,
  );
  return eachTick(from, to, (tick, i) =>
    fragment(
      tick,
      recorded.has(tick),
      byTick[i].map((r) => csvLine(r.cells)).join(''),
      byTick[i].length,
    ),
  );
}

async function tradesFragments(
  { em }: ReadContext,
  { spec, from, to }: Series<'trades'>,
): Promise<FragmentsReply> {
  const recorded = await recordedTicks(em, spec.market, from, to);
  const byTick = perTick(from, to, await rangeTrades(em, spec.market, from, to), (t) => t.tick);
  return eachTick(from, to, (tick, i) => {
    const texts = byTick[i].map((t) => JSON.stringify(tradeJson(t)));
    const starts: number[] = [0];
    for (const t of texts) starts.push(starts[starts.length - 1] + Buffer.byteLength(t) + 1);
    return {
      ...fragment(tick, recorded.has(tick), texts.join(','), texts.length),
      actors: byTick[i].map((t) => (t.actor === 'house' ? 'h' : 'u')).join(''),
      starts,
    };
  });
}

export const fragmentReads = defineReads({
  'record.fragments': (ctx, a: FragmentsArgs) => buildFragments(ctx, a),
  /** Several series at once (the close warms the sessions it settled): one worker hop. */
  'record.warm': async (ctx, a: { jobs: FragmentsArgs[] }) => {
    const out: FragmentsReply[] = [];
    for (const job of a.jobs) out.push(await buildFragments(ctx, job));
    return out;
  },
});
