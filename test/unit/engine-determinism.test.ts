// The engine is a pure function of (seed, market, tick): same seed, same bytes, whatever the
// order of computation; another seed, other bytes.
import { createHash } from 'node:crypto';
import t from 'tap';
import {
  ENGINE_IDENTITY,
  MARKET_IDS,
  MARKETS,
  type MarketId,
  dealMarketPath,
  dealOutcomeInputs,
  dealToJson,
  menu,
  sessionRow,
  sessionRows,
} from '../../src/engine/index.js';

const END = 1_760_000_000;
const lastTick = (m: MarketId) => Math.floor(END / MARKETS[m].interval_seconds);

function sessionJson(seed: number, market: MarketId, tick: number): string {
  return JSON.stringify(
    menu(seed, market, tick).map((d) => ({
      deal: dealToJson(d),
      outcome: dealOutcomeInputs(seed, market, tick, d.key),
      path: dealMarketPath(seed, market, d),
    })),
  );
}

const cases: Array<[MarketId, number]> = MARKET_IDS.flatMap((m) =>
  [0, 1, 2, 57].map((k): [MarketId, number] => [m, lastTick(m) - k]),
);

t.test('same seed gives byte-identical menus and outcomes in any order', async (t) => {
  const forward = cases.map(([m, tick]) => sessionJson(1, m, tick));
  // Other seeds in between flush the engine's memo, so the second pass recomputes everything.
  sessionJson(2, 'm15', lastTick('m15'));
  const backward = [...cases]
    .reverse()
    .map(([m, tick]) => sessionJson(1, m, tick))
    .reverse();
  sessionJson(3, 'h10', lastTick('h10'));
  const shuffled = new Map<number, string>();
  for (const i of [5, 0, 12, 3, 15, 8, 1, 10, 14, 2, 7, 11, 4, 13, 9, 6])
    shuffled.set(i, sessionJson(1, ...cases[i]));
  for (let i = 0; i < cases.length; i++) {
    t.equal(backward[i], forward[i], `${cases[i].join(' ')} reverse order`);
    t.equal(shuffled.get(i), forward[i], `${cases[i].join(' ')} shuffled order`);
  }
});

t.test('a single deal recomputed alone equals its menu row', async (t) => {
  const m: MarketId = 'h2';
  const tick = lastTick(m) - 3;
  const rows = sessionRows(7, m, tick);
  const i = Math.floor(rows.length / 2);
  sessionJson(8, m, tick); // flush the memo
  t.same(dealOutcomeInputs(7, m, tick, i), rows[i].inputs);
  t.same(dealOutcomeInputs(7, m, tick, rows[i].deal.key), rows[i].inputs);
  // Every row alone (its menu size drawn by sessionRow itself), in reverse order after a flush: a
  // record read builds only the rows it reveals; compared with the menu's deal and the deal's
  // outcome inputs recomputed on their own paths, and with the session's row.
  sessionJson(8, m, tick);
  const deals = menu(7, m, tick);
  for (let k = rows.length - 1; k >= 0; k--) {
    const alone = sessionRow(7, m, tick, k);
    t.same(
      alone,
      { deal: deals[k], inputs: dealOutcomeInputs(7, m, tick, k) },
      `row ${k} alone: the menu's deal and its outcome inputs`,
    );
    t.same(alone, rows[k], `row ${k} alone: the session's row`);
  }
});

t.test('different seeds give different menus and outcomes', async (t) => {
  for (const m of MARKET_IDS) {
    const tick = lastTick(m);
    t.not(sessionJson(1, m, tick), sessionJson(2, m, tick), `${m} seed 1 vs 2`);
    t.not(sessionJson(1, m, tick), sessionJson(1, m, tick + 1), `${m} tick vs tick+1`);
  }
});

// Outputs are pinned per engine identity: a change of code that moves any number without a
// change of parameters would silently alter recorded history, so it must show up here (then bump
// ENGINE_VERSION and record the new digest).
const GOLDEN: Record<string, string> = {
  '1.0.0':
    '82d6b8404928643be5679aeec1c03034b7c954ebebea79bcc5c843add56b4cf8:db49cb8f56d2a2552a516e07ccaf52575302952d99dd4cc0c484aff6b1ec62b5',
};

t.test('outputs are pinned to the engine identity', async (t) => {
  const digest = createHash('sha256');
  for (const [m, tick] of cases) digest.update(sessionJson(1, m, tick));
  const got = `${ENGINE_IDENTITY.params_hash}:${digest.digest('hex')}`;
  t.comment(`engine ${ENGINE_IDENTITY.version} output ${got}`);
  t.equal(
    got,
    GOLDEN[ENGINE_IDENTITY.version],
    'outputs changed: bump ENGINE_VERSION and record the new digest',
  );
});
