// Competition goods (CONTRACT.md "Competitions") on a real database, the clock the
// test's (the set-up of competitions.test.ts): a holder's competition account settles a position
// with unsold units; the goods are minted marked `source: "competition"`, `simulated: true`, and
// neither exchange book takes them (400, nothing listed, no ledger row): simulated money never
// becomes real USD or Gold Coins.
import t from 'tap';
import { dealOutcomeInputs, menu, settleDeal, type MarketId } from '../../src/engine/index.js';
import { startTestService } from '../helpers/service.js';
import { send } from '../helpers/agents.js';
import { getPage, postForm, registerHolder } from '../helpers/web.js';
import { H2, W, WINDOW_START } from '../helpers/competition.js';

const MARKET: MarketId = 'h2';

t.test(
  'goods of a competition position are simulated: marked in the inventory, refused by both exchange books',
  async (t) => {
    let nowMs = (WINDOW_START + 100) * 1000;
    const svc = await startTestService(t, {}, { realMs: () => nowMs });
    const q = (sql: string, p: unknown[] = []) =>
      svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
    const id = `h2-${W}`;

    const holder = await registerHolder(svc, 'racer@example.com');
    const joined = await postForm(
      svc,
      `/competitions/${id}/join`,
      {},
      { cookie: holder.cookie, json: true },
    );
    t.equal(joined.status, 200);
    const key = await postForm(
      svc,
      '/console/agents',
      { name: 'Racer', account_id: joined.body.account_id },
      { cookie: holder.cookie, json: true },
    );
    t.equal(key.status, 200);
    const auth = { authorization: `Bearer ${key.body.key}` };

    // A deal that, by the engine (a pure function of seed, market and session), leaves units unsold.
    const served = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals?limit=50`)).body;
    const offered = new Set(served.deals.map((d: any) => d.key));
    let pick: { key: string; qty: number } | undefined;
    for (const [idx, d] of menu(svc.config.seed, MARKET, served.tick).entries()) {
      if (!offered.has(d.key)) continue;
      const qty = Math.min(d.max_qty, 5);
      if (
        settleDeal(MARKET, d, dealOutcomeInputs(svc.config.seed, MARKET, served.tick, idx), qty)
          .qty_left > 0
      ) {
        pick = { key: d.key, qty };
        break;
      }
    }
    if (!pick) throw new Error(`no deal of session ${served.tick} leaves units unsold`);
    const order = await send(
      svc,
      'POST',
      '/api/v1/orders',
      { market: MARKET, offer_key: pick.key, qty: pick.qty },
      auth,
    );
    t.equal(order.status, 201, JSON.stringify(order.body));
    t.match(
      order.body,
      { status: 'paid', payment_source: 'balance' },
      'funded from the simulated balance',
    );

    // Ten sessions later the position has settled: its unsold units are the holder's goods.
    nowMs = (served.closes_at + 10 * H2) * 1000;
    await svc.services.supervisor.runDue();
    const filled = (await send(svc, 'GET', `/api/v1/orders/${order.body.id}`, undefined, auth))
      .body;
    const pos = (await send(svc, 'GET', `/api/v1/positions/${filled.position_id}`, undefined, auth))
      .body;
    t.equal(pos.status, 'settled');
    t.ok(pos.qty_left > 0, 'units left unsold');
    const itemId = pos.inventory.item_id;

    const inv = await send(svc, 'GET', '/api/v1/inventory', undefined, auth);
    t.equal(inv.status, 200);
    const item = inv.body.items.find((i: any) => i.id === itemId);
    t.match(
      item,
      {
        qty: pos.qty_left,
        source: 'competition',
        simulated: true,
        account_id: joined.body.account_id,
      },
      'marked as competition goods',
    );
    t.match(
      item.provenance,
      [{ kind: 'settlement', position_id: pos.id }],
      'minted like any others',
    );
    t.match(item.story, /simulated USD/);
    const page = await getPage(svc, '/console/inventory', { cookie: holder.cookie });
    t.equal(page.status, 200);
    t.match(page.text, /Simulated: bought with a competition/, 'the console says so');

    // Neither book takes them; nothing is listed and no money moves.
    const ledgerBefore = await q('select count(*)::int as n from ledger');
    const coinsBefore = await q('select count(*)::int as n from gc_ledger');
    for (const currency of ['USD', 'GC']) {
      const listed = await postForm(
        svc,
        '/exchange/list',
        { item_id: itemId, price: '500', currency },
        { cookie: holder.cookie, json: true },
      );
      t.equal(listed.status, 400, `${currency}: refused`);
      t.match(listed.body.detail, /simulated goods.*cannot be sold/, `${currency}: says why`);
    }
    t.same(
      await q('select id from exchange_listing where item_id = ?', [itemId]),
      [],
      'no listing',
    );
    t.same(
      (await send(svc, 'GET', '/api/v1/exchange/listings')).body.listings,
      [],
      'no open listing in either book',
    );
    t.same(
      (await send(svc, 'GET', '/api/v1/inventory', undefined, auth)).body.listings,
      [],
      'none in the inventory',
    );
    t.same(await q('select count(*)::int as n from ledger'), ledgerBefore, 'no ledger row');
    t.same(
      await q('select count(*)::int as n from gc_ledger'),
      coinsBefore,
      'no Gold Coin ledger row',
    );
    t.same(
      await q(
        `select id from ledger where ref like 'listing:%' or kind in ('exchange_sale', 'exchange_purchase')`,
      ),
      [],
      'no exchange money at all',
    );

    // The database keeps it so: an exchange sale's rewrite of the item cannot apply to simulated goods.
    await t.rejects(
      q(`update inventory_item set source = 'exchange' where id = ?`, [itemId]),
      /inventory_item_simulated_check/,
    );
  },
);
