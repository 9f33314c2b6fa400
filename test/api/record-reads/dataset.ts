// GET /markets/{id}/dataset.csv over HTTP on a started service with one day of history: labeled,
// expanded and unlabeled frames per market kind, checked against the history and trades answers
// (themselves checked against the engine), RFC 4180 quoting, caps and caching.
import t from 'tap';
import { sharedRecordedService } from '../../helpers/service.js';

// The shared service's clock stands at RECORDED_DAY_MS: no session closes while the tests read.
const svc = await sharedRecordedService();
const openOf = (m: string) => svc.services.supervisor.openTick(m)!;

/** A strict RFC 4180 reader: CRLF records, quoted fields with doubled quotes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [],
    field = '',
    i = 0,
    quoted = false;
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') {
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
      i++;
      continue;
    }
    if (c === ',') {
      row.push(field);
      field = '';
      i++;
      continue;
    }
    if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
      continue;
    }
    if (c === '\n' || c === '\r' || c === '"') throw new Error(`bare ${JSON.stringify(c)} at ${i}`);
    field += c;
    i++;
  }
  if (field !== '' || row.length) throw new Error('last record not ended by CRLF');
  return rows;
}

async function dataset(m: string, qs: string) {
  const res = await svc.get(`/api/v1/markets/${m}/dataset.csv?${qs}`);
  const text = await res.text();
  if (res.status !== 200)
    return {
      res,
      status: res.status,
      body: JSON.parse(text),
      header: [] as string[],
      rows: [] as Record<string, string>[],
    };
  const [header, ...data] = parseCsv(text);
  for (const r of data) if (r.length !== header.length) throw new Error('ragged row');
  const rows = data.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
  return { res, status: res.status, body: null, header, rows, text };
}
const history = async (m: string, from: number, to: number) => {
  const rows: any[] = [];
  for (let a = from; a <= to; a += 20)
    rows.push(
      ...(
        await svc.getJson(
          `/api/v1/markets/${m}/history?from_tick=${a}&to_tick=${Math.min(to, a + 19)}`,
        )
      ).body.rows,
    );
  return rows;
};
const num = (s: string) => (s === '' ? null : Number(s));

const DEAL = [
  'market',
  'tick',
  'offer_key',
  'cluster',
  'sku_family',
  'title',
  'listed_at',
  'unit_cost',
  'list_price',
  'margin',
  'max_qty',
  'house_accepted',
  'house_qty',
];
const VELOCITY = ['sv', 'isv'];
const RANKING = ['sales_rank', 'sales_rank_avg', 'rank_drops', 'rank_drops_long', 'nsellers'];
const LABELS = [
  'trade_id',
  'actor',
  'qty',
  'cost_basis',
  'sales_by_tick',
  'units_sold',
  'sold_out',
  'regime',
  'revenue',
  'holding_cost',
  'surcharge',
  'writeoff',
  'realized_pnl',
];

/** The listing columns of a CSV row against its history row. */
function checkDeal(t: Tap.Test, m: string, c: Record<string, string>, h: any) {
  t.same(
    [
      c.market,
      num(c.tick),
      c.offer_key,
      num(c.cluster),
      c.sku_family,
      c.title,
      num(c.listed_at),
      num(c.unit_cost),
      num(c.list_price),
      num(c.margin),
      num(c.max_qty),
      c.house_accepted,
      num(c.house_qty),
    ],
    [
      m,
      h.tick,
      h.key,
      h.cluster,
      h.sku_family,
      h.title,
      h.listed_at,
      h.unit_cost,
      h.list_price,
      h.margin,
      h.max_qty,
      String(h.house_accepted),
      h.house_qty,
    ],
    `${h.key}: the listing's own columns`,
  );
  if (m === 'm15') t.same([num(c.sv), num(c.isv)], [h.sales_velocity, h.inverse_sv]);
  else for (const f of RANKING) t.equal(num(c[f]), h[f], f);
}

for (const m of ['m15', 'h2']) {
  const quote = m === 'm15' ? VELOCITY : RANKING;

  t.test(
    `${m}: labeled = settled trades, one row each; the range is clipped to settled sessions`,
    async (t) => {
      const open = openOf(m);
      const from = open - 12,
        to = open - 1;
      const d = await dataset(m, `from_tick=${from}&to_tick=${to}`);
      t.equal(d.status, 200);
      t.equal(d.res.headers.get('content-type'), 'text/csv; charset=utf-8');
      t.same(d.header, [...DEAL, ...quote, ...LABELS]);
      for (const f of m === 'm15' ? RANKING : VELOCITY) t.notOk(d.header.includes(f), `no ${f}`);
      const trades = (
        await svc.getJson(`/api/v1/markets/${m}/trades?from_tick=${from}&to_tick=${to}`)
      ).body;
      const settled = trades.trades.filter((x: any) => x.settled);
      t.ok(
        settled.length > 0 && settled.length < trades.total,
        'unsettled trades exist and are left out',
      );
      t.equal(d.rows.length, settled.length);
      t.equal(d.res.headers.get('x-rows'), String(settled.length));
      const rows = await history(m, from, to);
      const byKey = new Map(rows.map((r: any) => [r.key, r]));
      d.rows.forEach((c, i) => {
        const x = settled[i];
        checkDeal(t, m, c, byKey.get(x.offer_key));
        t.same(
          [
            num(c.trade_id),
            c.actor,
            num(c.qty),
            num(c.cost_basis),
            c.sales_by_tick,
            num(c.units_sold),
            c.sold_out,
            c.regime,
            num(c.revenue),
            num(c.holding_cost),
            num(c.surcharge),
            num(c.writeoff),
            num(c.realized_pnl),
          ],
          [
            x.id,
            x.actor,
            x.qty,
            x.cost_basis,
            x.sales_by_tick.join(';'),
            x.units_sold,
            String(x.sold_out),
            String(x.regime),
            x.revenue_so_far,
            x.holding_cost_so_far,
            x.surcharge,
            x.writeoff,
            x.realized_pnl,
          ],
          'labels of the trade',
        );
      });
      t.ok(
        d.rows.some((c) => c.title.includes(',')) && /\r\n[^\r]*"[^"]*, [^"]*"/.test(d.text!),
        'titles with commas are quoted',
      );
    },
  );

  t.test(
    `${m}: expand_qty = one row per volume of every executed deal, profit from its curve`,
    async (t) => {
      const open = openOf(m);
      const from = open - 14,
        to = open - 9;
      const d = await dataset(m, `from_tick=${from}&to_tick=${to}&expand_qty=true`);
      t.equal(d.status, 200);
      t.same(d.header, [
        ...DEAL,
        ...quote,
        'executed_qty',
        'house_executed',
        'user_executed',
        'known_up_to_qty',
        'qty',
        'profit',
      ]);
      const observed = (await history(m, from, to)).filter((r: any) => r.status === 'observed');
      t.equal(
        d.rows.length,
        observed.reduce((s: number, r: any) => s + r.max_qty, 0),
        'max_qty rows per executed deal',
      );
      let i = 0,
        empty = 0;
      for (const h of observed) {
        for (let q = 1; q <= h.max_qty; q++, i++) {
          const c = d.rows[i];
          if (q === 1) checkDeal(t, m, c, h);
          t.same(
            [
              c.offer_key,
              num(c.qty),
              num(c.executed_qty),
              num(c.known_up_to_qty),
              c.house_executed,
              c.user_executed,
            ],
            [h.key, q, h.trades[0].qty, h.known_up_to_qty, 'true', 'false'],
          );
          t.equal(num(c.profit), h.profit_curve[q - 1], 'profit at this volume from the curve');
          t.equal(c.profit === '', q > h.known_up_to_qty, 'empty exactly above known_up_to_qty');
          if (c.profit === '') empty++;
        }
      }
      t.ok(empty > 0, `${empty} unknown volumes after sell-outs`);
      const wide = await dataset(m, `from_tick=${from}&to_tick=${from + 50}&expand_qty=true`);
      t.equal(wide.status, 422, '51 sessions expanded');
      t.same(wide.body.detail[0].loc, ['query', 'to_tick']);
      t.equal(
        (await dataset(m, `from_tick=${from - 49}&to_tick=${from}&expand_qty=true`)).status,
        200,
        '50 sessions allowed',
      );
    },
  );

  t.test(
    `${m}: unlabeled = every menu row of closed recorded sessions with execution flags, no outcomes`,
    async (t) => {
      const open = openOf(m);
      const from = open - 5,
        to = open + 3;
      const d = await dataset(m, `from_tick=${from}&to_tick=${to}&split=unlabeled`);
      t.equal(d.status, 200);
      t.same(d.header, [...DEAL, ...quote, 'executed', 'house_executed', 'user_executed']);
      const rows = await history(m, from, open - 1);
      t.equal(
        d.rows.length,
        rows.length,
        'every menu row of the closed sessions, none of the open one',
      );
      d.rows.forEach((c, i) => {
        const h = rows[i];
        checkDeal(t, m, c, h);
        t.same(
          [c.executed, c.house_executed, c.user_executed],
          [
            String(h.status === 'observed'),
            String(h.trades.some((x: any) => x.actor === 'house')),
            'false',
          ],
        );
      });
      t.ok(d.rows.some((c) => c.executed === 'true') && d.rows.some((c) => c.executed === 'false'));
      // Sessions never recorded (before the one-day window) give no rows; the header stays.
      const before = await dataset(
        m,
        `from_tick=${open - 400}&to_tick=${open - 381}&split=unlabeled`,
      );
      t.equal(before.status, 200);
      t.same([before.rows.length, before.text], [0, `${d.header.join(',')}\r\n`], 'header only');
    },
  );
}

t.test('caps, validation and errors', async (t) => {
  const loc = async (qs: string, field = 'to_tick') => {
    const d = await dataset('m45', qs);
    t.equal(d.status, 422, qs);
    t.same(d.body.detail[0].loc, ['query', field], qs);
  };
  await loc('from_tick=1000&to_tick=1400');
  t.equal(
    (await dataset('m45', 'from_tick=1000&to_tick=1399')).status,
    200,
    '400 sessions labeled',
  );
  await loc('from_tick=1000&to_tick=1020&split=unlabeled');
  t.equal(
    (await dataset('m45', 'from_tick=1000&to_tick=1019&split=unlabeled')).status,
    200,
    '20 sessions unlabeled',
  );
  t.equal(
    (await dataset('m45', 'from_tick=1000&to_tick=1399&split=unlabeled&expand_qty=true')).status,
    422,
    'expand_qty does not widen unlabeled',
  );
  await loc('from_tick=1000&to_tick=999');
  await loc('from_tick=1&to_tick=2&split=all', 'split');
  await loc('from_tick=1&to_tick=2&expand_qty=yes please', 'expand_qty');
  await loc('to_tick=2', 'from_tick');
  const empty = await dataset('m45', 'from_tick=1000&to_tick=1001');
  t.same(
    [empty.rows.length, empty.header.length],
    [0, DEAL.length + VELOCITY.length + LABELS.length],
    'header line even without rows',
  );
  const unknown = await dataset('q9', 'from_tick=1&to_tick=2');
  t.equal(unknown.status, 404);
  t.type(unknown.body.detail, 'string');
});

t.test('ETag and 304 on a settled range', async (t) => {
  const open = openOf('h2');
  const url = `/api/v1/markets/h2/dataset.csv?from_tick=${open - 12}&to_tick=${open - 9}`;
  const first = await svc.get(url);
  t.equal(first.status, 200);
  t.match(first.headers.get('cache-control'), /immutable/);
  t.match(first.headers.get('content-disposition'), /filename="h2-labeled-/);
  const etag = first.headers.get('etag')!;
  const again = await svc.get(url, { headers: { 'if-none-match': etag } });
  t.equal(again.status, 304);
  t.equal(await again.text(), '');
  const live = await svc.get(
    `/api/v1/markets/h2/dataset.csv?from_tick=${open - 3}&to_tick=${open - 1}&split=unlabeled`,
  );
  t.equal(live.headers.get('cache-control'), 'no-cache');
});
