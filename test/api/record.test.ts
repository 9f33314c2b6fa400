// The market record on a real database with a driven clock: the history backfill and live closes
// write the same rows for the same sessions, each session is recorded exactly once, positions
// advance one session per close and settle after 8 with the cash formulas, and the same seed gives
// the same record.
import t from 'tap';
import { marketRef } from '../../actors/market/messages.js';
import { houseTrade } from '../../actors/market/rows.js';
import type { ActorRuntime } from '../../actors/runtime/shards.js';
import { MARKETS, menu, sessionRows } from '../../src/engine/index.js';
import type { Supervisor } from '../../src/supervisor/supervisor.js';
import { clockRig, T0 } from '../helpers/clock-rig.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(180); // a backfill and live closes recorded on a driven clock

const SEED = 7;

type Rig = {
  rt: ActorRuntime;
  sup: Supervisor;
  setNow: (s: number) => void;
  q: (sql: string, p?: unknown[]) => Promise<any[]>;
};

async function rig(tt: Tap.Test, backfillDays = 0.25): Promise<Rig> {
  const r = await clockRig(tt);
  const rt = r.runtime(SEED);
  const sup = r.supervisor(rt, [MARKETS.m15], { backfillDays, backfillChunk: 5 });
  await sup.start();
  await sup.backfilled();
  return { rt, sup, setNow: r.setNow, q: r.q };
}

const OPEN = T0 / 900;

t.test(
  'the backfill records every past session of the window once, with the desk revealed as time allows',
  async (tt) => {
    const r = await rig(tt);
    const [rec] = await r.q(
      'select live_start::float8 live_start, from_tick::float8 from_tick, sessions_total, sessions_loaded, finished_at is not null done from history_load',
    );
    tt.same(rec, {
      live_start: OPEN,
      from_tick: OPEN - 24,
      sessions_total: 24,
      sessions_loaded: 24,
      done: true,
    });
    const sessions = await r.q(
      "select tick::float8 tick from market_session where market = 'm15' and recorded order by tick",
    );
    tt.same(
      sessions.map((s) => s.tick),
      Array.from({ length: 24 }, (_, i) => OPEN - 24 + i),
    );
    for (const tick of [OPEN - 24, OPEN - 9, OPEN - 1]) {
      const deals = menu(SEED, 'm15', tick);
      const [{ n }] = await r.q(
        "select count(*)::int n from menu_row where market = 'm15' and tick = ?",
        [tick],
      );
      tt.equal(n, deals.length, `session ${tick}: every menu row recorded`);
      const trades = await r.q(
        "select idx, revealed_ticks, settled, realized_pnl_cents::float8 pnl from trade where market = 'm15' and tick = ? order by idx",
        [tick],
      );
      tt.same(
        trades.map((x) => x.idx),
        deals.flatMap((d, i) => (d.house_accepted ? [i] : [])),
        'the desk executed exactly its bids',
      );
      const revealed = Math.min(8, OPEN - 1 - tick);
      tt.ok(
        trades.every((x) => x.revealed_ticks === revealed && x.settled === (revealed === 8)),
        `revealed ${revealed}`,
      );
    }
    const again = await r.rt.ask(marketRef('m15'), {
      kind: 'backfill',
      from: OPEN - 24,
      to: OPEN - 1,
    });
    tt.equal(again.recorded, 0, 'a repeated backfill records nothing');
  },
);

t.test(
  'live closes advance positions exactly as the engine computes them, and settle with the cash formulas',
  async (tt) => {
    const r = await rig(tt);
    r.setNow(T0 + 12 * 900 + 1);
    await r.sup.runDue();
    const open = r.sup.openTick('m15')!;
    tt.equal(open, OPEN + 12);
    const rows = await r.q(
      `select tick::float8 tick, idx, revealed_ticks, sales_by_tick, units_sold, qty_left, revenue_cents::float8 revenue, holding_cost_cents::float8 holding,
            cost_basis_cents::float8 basis, settled, surcharge_cents::float8 surcharge, realized_pnl_cents::float8 pnl from trade where market = 'm15' order by tick, idx`,
    );
    tt.ok(rows.length > 100, `${rows.length} trades`);
    const byTick = new Map<number, ReturnType<typeof sessionRows>>();
    let settled = 0;
    for (const row of rows) {
      if (!byTick.has(row.tick)) byTick.set(row.tick, sessionRows(SEED, 'm15', row.tick));
      const s = byTick.get(row.tick)![row.idx];
      const expected = houseTrade(
        SEED,
        'm15',
        s.deal,
        row.idx,
        s.inputs,
        Math.min(8, open - 1 - row.tick),
      );
      const same =
        row.revealed_ticks === expected.revealed_ticks &&
        JSON.stringify(row.sales_by_tick) === JSON.stringify(expected.sales_by_tick) &&
        row.revenue === expected.revenue_cents &&
        row.holding === expected.holding_cost_cents &&
        row.qty_left === expected.qty_left &&
        row.settled === expected.settled &&
        (row.pnl ?? null) === expected.realized_pnl_cents;
      if (!same)
        tt.fail(`trade ${row.tick}/${row.idx} differs: ${JSON.stringify({ row, expected })}`);
      if (row.settled) {
        settled++;
        tt.equal(
          row.pnl,
          row.revenue - row.basis - row.holding - row.surcharge,
          'realized_pnl = revenue - cost_basis - holding - surcharge',
        );
      }
    }
    tt.ok(settled > 50, `${settled} settled trades checked`);
    tt.pass('every trade equals the engine computed at once');
  },
);

t.test('a session closes once: a repeated close changes nothing', async (tt) => {
  const r = await rig(tt, 0);
  r.setNow(T0 + 3 * 900 + 1);
  await r.sup.runDue();
  const count = async () =>
    (
      await r.q(
        'select (select count(*) from trade)::int t, (select count(*) from tape)::int p, (select sum(revealed_ticks) from trade)::int rv',
      )
    )[0];
  const before = await count();
  const reply = await r.rt.ask(marketRef('m15'), { kind: 'close', tick: OPEN + 1 });
  tt.equal(reply.closed, false);
  tt.same(await count(), before, 'no trade, tape row or advance was added');
});

t.test('each session tape records what earlier positions sold in it', async (tt) => {
  const r = await rig(tt);
  r.setNow(T0 + 4 * 900 + 1);
  await r.sup.runDue(); // live sessions OPEN..OPEN+3 on top of the backfill
  for (const tick of [OPEN - 14, OPEN - 1, OPEN + 2]) {
    const [tape] = await r.q(
      "select row from tape where market = 'm15' and tick = ? and cluster = -1",
      [tick],
    );
    const trades = await r.q(
      "select tick::float8 tick, sales_by_tick from trade where market = 'm15' and tick between ? and ?",
      [tick - 8, tick - 1],
    );
    const sold = trades.reduce((s, x) => s + (x.sales_by_tick[tick - x.tick - 1] ?? 0), 0);
    tt.equal(tape.row.sold, sold, `session ${tick}: tape sold ${sold}`);
    tt.equal(tape.row.active, trades.length, 'active positions');
    tt.equal(tape.row.menu_n, menu(SEED, 'm15', tick).length);
    const [families] = await r.q(
      "select sum((row->>'sold')::int)::int sold, sum((row->>'inventory')::int)::int inv from tape where market = 'm15' and tick = ? and cluster >= 0",
      [tick],
    );
    tt.same(
      families,
      { sold: tape.row.sold, inv: tape.row.inventory },
      'the families add up to the market',
    );
  }
});

t.test('the same seed gives the same record on another database', async (tt) => {
  const a = await rig(tt);
  const b = await rig(tt);
  const digest = (x: Rig) =>
    x.q(
      `select md5(string_agg(concat_ws('|', market, tick, idx, offer_key, unit_cost_cents, list_price_cents, house_qty, deal::text), ',' order by market, tick, idx)) m from menu_row`,
    );
  const trades = (x: Rig) =>
    x.q(
      `select md5(string_agg(concat_ws('|', tick, idx, qty, sales_by_tick::text, realized_pnl_cents), ',' order by tick, idx)) m from trade`,
    );
  tt.same(await digest(a), await digest(b), 'menus');
  tt.same(await trades(a), await trades(b), 'trades and outcomes');
});
