// The latent process: an autocorrelated demand index, a log-linear rank, demand paths as counts,
// and a downside regime that collapses demand and alone brings a surcharge.
import t from 'tap';
import {
  MARKETS,
  type MarketId,
  dealOutcomeInputs,
  familyTicks,
  menu,
  pearson,
  sessionRows,
} from '../../src/engine/index.js';

const END = 1_760_000_000;
const lastTick = (m: MarketId) => Math.floor(END / MARKETS[m].interval_seconds);

t.test('demand index: mean about 1, autocorrelated from session to session', async (t) => {
  const m: MarketId = 'm15';
  const last = lastTick(m);
  const series: number[] = [];
  for (let tick = last - 3000; tick <= last; tick++)
    series.push(Math.log(familyTicks(5, m, tick)[0].index));
  const mean = series.reduce((a, b) => a + Math.exp(b), 0) / series.length;
  t.ok(mean > 0.8 && mean < 1.25, `mean index ${mean.toFixed(3)}`);
  const lag1 = pearson(series.slice(1), series.slice(0, -1));
  const lag40 = pearson(series.slice(40), series.slice(0, -40));
  t.ok(lag1 > 0.8, `lag-1 autocorrelation ${lag1.toFixed(3)}`);
  t.ok(lag40 < lag1 - 0.3, `decays: lag-40 ${lag40.toFixed(3)}`);
});

t.test('sales rank is log-linear in family demand (lower = faster)', async (t) => {
  const m: MarketId = 'h2';
  const xs: number[] = [];
  const ys: number[] = [];
  for (let tick = lastTick(m) - 200; tick <= lastTick(m); tick++) {
    for (const f of familyTicks(5, m, tick)) {
      xs.push(Math.log(f.units));
      ys.push(Math.log(f.rank));
    }
  }
  const c = pearson(xs, ys);
  t.ok(c < -0.9, `corr(log units, log rank) ${c.toFixed(3)}`);
});

t.test(
  'demand paths: 8 non-negative counts; regime collapses demand and alone carries a surcharge',
  async (t) => {
    let regimes = 0;
    let rows = 0;
    for (const m of ['m15', 'h10'] as MarketId[]) {
      for (let tick = lastTick(m) - 30; tick <= lastTick(m); tick++) {
        for (const { inputs: o } of sessionRows(9, m, tick)) {
          rows++;
          if (o.demand.length !== 8 || !o.demand.every((d) => Number.isSafeInteger(d) && d >= 0))
            t.fail('bad demand path');
          if (o.regime) {
            regimes++;
            const k = o.regime_session as number;
            if (!(k >= 1 && k <= 8) || o.demand.slice(k - 1).some((d) => d !== 0))
              t.fail('demand after the strike');
            if (!(o.extra_cost_frac > 0 && o.flat_extra_cost_cents > 0))
              t.fail('regime without surcharge');
          } else if (
            o.regime_session !== null ||
            o.extra_cost_frac !== 0 ||
            o.flat_extra_cost_cents !== 0
          ) {
            t.fail('surcharge without regime');
          }
        }
      }
    }
    t.ok(
      regimes / rows > 0.02 && regimes / rows < 0.12,
      `regime on ${((100 * regimes) / rows).toFixed(1)} % of rows`,
    );
  },
);

t.test('a deal has one path for every executor, keyed by the deal', async (t) => {
  const m: MarketId = 'm45';
  const tick = lastTick(m);
  const d = menu(4, m, tick)[3];
  t.same(dealOutcomeInputs(4, m, tick, 3), dealOutcomeInputs(4, m, tick, d.key));
  t.not(
    JSON.stringify(dealOutcomeInputs(4, m, tick, 3)),
    JSON.stringify(dealOutcomeInputs(4, m, tick, 4)),
  );
  t.throws(() => dealOutcomeInputs(4, m, tick + 1, d.key), 'a key belongs to its own session');
});
