// The core loop over HTTP on a real database with a clock the test drives (each m15 close is a
// step the test takes): an agent registers and orders, a holder registers and pays by card, the
// order fills at the close, the position sells through 8 sessions and settles; money checked
// against the cash formulas and the ledger. Deals are picked with the engine (a pure function of
// seed, market and tick), so the test knows which will end in profit.
import t from 'tap';
import { dealOutcomeInputs, menu, settleDeal } from '../../src/engine/index.js';
import { instantSql } from '../../actors/runtime/sql.js';
import type { TestService } from '../helpers/service.js';
import { startClockedService, type ClockedService } from '../helpers/clocked.js';
import {
  ledgerSumCents,
  registerAgent,
  send,
  type Menu,
  type TestAgent,
} from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder, type TestHolder } from '../helpers/holders.js';

const MARKET = 'm15';
const cents = (x: number) => Math.round(x * 100);

/** The menu of the open m15 session (the clock stands still: it stays open until the test closes it). */
async function currentMenu(svc: TestService): Promise<Menu> {
  const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  if (m.tick !== svc.services.supervisor.openTick(MARKET))
    throw new Error(
      `the menu's session ${m.tick} is not the open one ${svc.services.supervisor.openTick(MARKET)}`,
    );
  return m;
}

/** Realised P&L of `qty` units of menu row `idx` of session `tick`, from the engine. */
const engineResult = (svc: TestService, tick: number, idx: number, qty: number) => {
  const deal = menu(svc.config.seed, MARKET, tick)[idx];
  return settleDeal(MARKET, deal, dealOutcomeInputs(svc.config.seed, MARKET, tick, idx), qty);
};

/**
 * Orders a deal chosen by `pick` in the open session and has the holder pay it; when the menu has
 * no such deal the test closes the session and looks at the next one's (menus are the engine's).
 */
async function orderAndPay(
  c: ClockedService,
  agent: TestAgent,
  holder: TestHolder,
  pick: (m: Menu) => number,
  qty: number,
) {
  for (let sessions = 0; sessions < 50; sessions++) {
    const m = await currentMenu(c.svc);
    const idx = pick(m);
    if (idx < 0) {
      await c.closeSession(MARKET);
      continue;
    }
    const order = await agent.post('/api/v1/orders', {
      market: MARKET,
      offer_key: m.deals[idx].key,
      qty,
    });
    if (order.status !== 201)
      throw new Error(`order: ${order.status} ${JSON.stringify(order.body)}`);
    const paid = await holder.pay(order.body.purchase_url);
    if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${JSON.stringify(paid.body)}`);
    return { order: order.body, paid: paid.body, tick: m.tick, idx };
  }
  throw new Error('no menu of 50 sessions had the deal wanted');
}

t.test('orders, checkout, fills, settlement and autonomous funding', async (t) => {
  const c = await startClockedService(t);
  const svc = c.svc;
  const fee = (await send(svc, 'GET', `/api/v1/markets/${MARKET}`)).body.fees.fulfilment_per_unit;
  const agent = await registerAgent(svc, {
    name: 'Loop agent',
    agent: { model: 'loop-1' },
    operator: { name: 'Loop Ops' },
    purpose: 'testing the loop',
  });
  const other = await registerAgent(svc);

  await t.test('orders are validated against the current menu', async (t) => {
    const m = await currentMenu(svc);
    const deal = m.deals[0];
    t.equal(
      (await agent.post('/api/v1/orders', { market: 'x9', offer_key: deal.key, qty: 1 })).status,
      404,
      'unknown market',
    );
    t.equal(
      (await agent.post('/api/v1/orders', { market: MARKET, offer_key: 'm15-1-0-zzzzzz', qty: 1 }))
        .status,
      404,
      'deal not on the menu',
    );
    const zero = await agent.post('/api/v1/orders', {
      market: MARKET,
      offer_key: deal.key,
      qty: 0,
    });
    t.equal(zero.status, 422);
    t.same(zero.body.detail[0].loc, ['body', 'qty']);
    const over = await agent.post('/api/v1/orders', {
      market: MARKET,
      offer_key: deal.key,
      qty: deal.max_qty + 1,
    });
    t.equal(over.status, 422, 'above max_qty');
    t.same(over.body.detail[0].loc, ['body', 'qty']);
    t.match(over.body.detail[0].msg, "this deal's max_qty", 'the refusal names the limit');
    t.same(
      over.body.detail[0].ctx,
      { le: deal.max_qty, max_qty: deal.max_qty },
      'for a program too',
    );
    const auto = await agent.post('/api/v1/orders', {
      market: MARKET,
      offer_key: deal.key,
      qty: 1,
      pay_from_balance: true,
    });
    t.equal(auto.status, 403, 'pay_from_balance without the switch');
    t.match(auto.body.detail, /autonomous funding/);
  });

  await t.test(
    'an order answers its amounts, purchase_url and closes_at; nobody else sees it',
    async (t) => {
      const m = await currentMenu(svc);
      const deal = m.deals[1];
      const qty = Math.min(2, deal.max_qty);
      const r = await agent.post('/api/v1/orders', { market: MARKET, offer_key: deal.key, qty });
      t.equal(r.status, 201);
      const o = r.body;
      t.equal(o.status, 'awaiting_payment');
      t.equal(cents(o.gross_amount), qty * cents(deal.unit_cost), 'gross = qty x unit_cost');
      t.equal(
        cents(o.total_amount),
        qty * cents(deal.unit_cost) + qty * cents(fee),
        'total = qty x unit_cost + qty x fee',
      );
      t.equal(cents(o.fee_amount), qty * cents(fee));
      t.equal(o.closes_at, m.closes_at);
      t.match(o.purchase_url, new RegExp(`^${svc.config.baseUrl}/checkout/[A-Za-z0-9_-]+$`));
      t.match(o.instructions, /purchase_url/);
      t.equal(o.deal_title, deal.bundle.title);
      t.same(o.items, deal.bundle.items);
      t.equal((await agent.get(`/api/v1/orders/${o.id}`)).body.purchase_url, o.purchase_url);
      t.equal(
        (await other.get(`/api/v1/orders/${o.id}`)).status,
        404,
        "another agent's order is not found",
      );
      t.ok(
        (await agent.get('/api/v1/orders?status=awaiting_payment')).body.orders.some(
          (x: { id: number }) => x.id === o.id,
        ),
        'listed as awaiting payment while its session is open',
      );
      t.equal((await agent.get('/api/v1/orders?limit=0')).status, 422);
    },
  );

  const holder = await registerHolder(svc);

  await t.test(
    'declined and invalid cards charge nothing; a link paid after its session closed is refused',
    async (t) => {
      const m = await currentMenu(svc);
      const r = await agent.post('/api/v1/orders', {
        market: MARKET,
        offer_key: m.deals[2].key,
        qty: 1,
      });
      t.equal(r.status, 201);
      const cards: [string, Record<string, string>, number][] = [
        ['declined', { ...APPROVED_CARD, number: '4000 0000 0000 0002' }, 402],
        ['fails Luhn', { ...APPROVED_CARD, number: '4242 4242 4242 4241' }, 400],
        ['expired', { ...APPROVED_CARD, exp: '01/20' }, 400],
      ];
      for (const [why, card, status] of cards) {
        const p = await holder.pay(r.body.purchase_url, card);
        t.equal(p.status, status, why);
        t.type(p.body.detail, 'string');
      }
      const open = (await agent.get(`/api/v1/orders/${r.body.id}`)).body;
      t.equal(open.status, 'awaiting_payment', 'unpaid while its session is open');
      t.equal(open.purchase_url, r.body.purchase_url, 'its link to hand over');
      t.match(
        open.instructions,
        /^Hand purchase_url to your account holder/,
        'and what to do with it',
      );
      await c.closeSession(MARKET);
      const expired = (await agent.get(`/api/v1/orders/${r.body.id}`)).body;
      t.equal(expired.status, 'expired', 'expired by the close');
      t.equal(expired.purchase_url, null, 'its dead link is no longer served');
      t.match(expired.instructions, /expired unfunded/, 'it says what happened');
      t.ok(
        expired.instructions.includes(`${svc.config.baseUrl}/api/v1/markets/${MARKET}/deals`),
        'and where to order again: the current menu, by its URL',
      );
      const listed = (await agent.get('/api/v1/orders')).body.orders.find(
        (o: { id: number }) => o.id === r.body.id,
      );
      t.same(
        [listed.purchase_url, listed.instructions],
        [null, expired.instructions],
        'the list serves it the same',
      );
      const late = await holder.pay(r.body.purchase_url);
      t.equal(late.status, 409, 'paid after the close');
      t.match(late.body.detail, /expired/);
      const account = (await agent.get('/api/v1/account')).body;
      t.equal(account.balance, 0);
      t.same(account.ledger, [], 'nothing was charged');
      const round = (await agent.get('/api/v1/rounds')).body.rounds.find(
        (x: { id: number }) => x.id === r.body.round_id,
      );
      t.equal(round.status, 'expired');
    },
  );

  // Three deals that end in profit at 1 unit, and one that leaves unsold units (owned goods).
  const profitable = (m: Menu) =>
    m.deals.findIndex(
      (d, idx) => d.max_qty >= 1 && engineResult(svc, m.tick, idx, 1).realized_pnl_cents > 0,
    );
  const leftover = (m: Menu) =>
    m.deals.findIndex((d, idx) => d.max_qty >= 3 && engineResult(svc, m.tick, idx, 3).qty_left > 0);
  const fills: { order: any; paid: any; tick: number; idx: number; qty: number }[] = [];
  await t.test(
    'a holder pays by card: the participation fee once a month, a second payment charges nothing',
    async (t) => {
      for (let i = 0; i < 3; i++)
        fills.push({ ...(await orderAndPay(c, agent, holder, profitable, 1)), qty: 1 });
      fills.push({ ...(await orderAndPay(c, agent, holder, leftover, 3)), qty: 3 });
      t.equal(fills[0].paid.ok, true);
      t.equal(fills[0].paid.fee, 15, "the holder's first checkout of the month carries the fee");
      t.equal(
        cents(fills[0].paid.charged),
        cents(fills[0].order.total_amount) + 1500,
        'the order and the fee, to the cent',
      );
      for (const f of fills.slice(1))
        t.equal(f.paid.fee, 0, 'no fee on further checkouts of the month');
      const again = await holder.pay(fills[3].order.purchase_url);
      t.equal(again.status, 200, 'paying twice is not an error');
      t.equal(again.body.charged, 0, '...and charges nothing');
      const ledger = (await agent.get('/api/v1/account?limit=500')).body.ledger;
      t.equal(ledger.filter((e: { kind: string }) => e.kind === 'monthly_fee').length, 1);
      t.equal(
        ledger.filter(
          (e: { kind: string; ref: string }) =>
            e.kind === 'card_charge' && e.ref === `order:${fills[3].order.id}`,
        ).length,
        1,
      );
      const me = (await agent.get('/api/v1/agents/me')).body;
      t.equal(me.paired, true, 'paying connected the holder');
      t.equal((await agent.get('/api/v1/account')).body.monthly_fee.due, false);
    },
  );

  await t.test('funding cannot be switched on before 3 settled trades in profit', async (t) => {
    const r = await holder.form(`/console/agents/${agent.agentId}/funding`, { enabled: 'on' });
    t.equal(r.status, 403);
  });

  await t.test(
    'fills become positions that sell through 8 sessions and settle by the formula',
    async (t) => {
      for (const f of fills) {
        // The close of the order's session fills it; each close after it sells one session; the
        // close of session tick + 8 settles it.
        const sup = svc.services.supervisor;
        t.equal(
          (await agent.get(`/api/v1/orders/${f.order.id}`)).body.status,
          sup.openTick(MARKET) === f.tick ? 'paid' : 'filled',
          'paid until its session closes',
        );
        while (sup.openTick(MARKET)! <= f.tick) await c.closeSession(MARKET);
        const order = (await agent.get(`/api/v1/orders/${f.order.id}`)).body;
        t.equal(order.status, 'filled', 'filled by the close of its session');
        // (An earlier fill's sessions may have closed while a later order looked for its deal.)
        if (sup.openTick(MARKET)! <= f.tick + 8) {
          while (sup.openTick(MARKET)! < f.tick + 8) await c.closeSession(MARKET);
          const selling = (await agent.get(`/api/v1/positions/${order.position_id}`)).body;
          t.not(selling.status, 'settled', 'still selling before the close of session tick + 8');
          t.equal(selling.ticks_done, 7, 'seven sessions sold');
          await c.closeSession(MARKET);
        }
        const pos = (await agent.get(`/api/v1/positions/${order.position_id}`)).body;
        t.equal(pos.status, 'settled', 'settled by the close of session tick + 8');
        const expected = engineResult(svc, f.tick, f.idx, f.qty);
        t.equal(pos.order_id, f.order.id);
        t.equal(pos.opened_tick, f.tick);
        t.equal(pos.settles_at_tick, f.tick + 8);
        t.equal(pos.ticks_done, 8);
        t.equal(
          cents(pos.realized_pnl),
          expected.realized_pnl_cents,
          'realized_pnl is the engine result',
        );
        t.equal(
          cents(pos.realized_pnl),
          cents(pos.revenue) -
            cents(pos.cost_basis) -
            cents(pos.holding_cost) -
            cents(pos.surcharge),
          'revenue - cost_basis - holding - surcharge',
        );
        t.equal(cents(pos.cost_basis), f.qty * cents(f.order.unit_cost) + f.qty * cents(fee));
        t.equal(cents(pos.writeoff), pos.qty_left * cents(pos.unit_cost));
        t.same(pos.outcome, {
          sold_out: pos.qty_left === 0,
          downside_event: expected.regime,
          surcharge: pos.surcharge,
          writeoff: pos.writeoff,
        });
        t.equal(pos.inventory.transferred_units, pos.qty_left);
        const record = (
          await send(
            svc,
            'GET',
            `/api/v1/markets/${MARKET}/trades?from_tick=${f.tick}&to_tick=${f.tick}&actor=user`,
          )
        ).body.trades;
        const same = record.find((x: { position_id: number }) => x.position_id === pos.id);
        t.equal(
          same.realized_pnl,
          pos.realized_pnl,
          'the record shows the same fill with the same realized_pnl',
        );
        t.equal(same.account_id, agent.accountId);
        t.equal(
          (await other.get(`/api/v1/positions/${pos.id}`)).status,
          404,
          "another agent's position is not found",
        );
        if (pos.qty_left > 0) {
          const items = (await agent.get('/api/v1/inventory')).body.items;
          const item = items.find((x: { id: number }) => x.id === pos.inventory.item_id);
          t.equal(item.qty, pos.qty_left, 'unsold units became owned goods');
          for (const k of [
            'story',
            'rarity',
            'rarity_score',
            'history',
            'economy',
            'source',
            'provenance',
          ])
            t.ok(k in item, k);
        }
        const round = (await agent.get('/api/v1/rounds')).body.rounds.find(
          (x: { id: number }) => x.id === f.order.round_id,
        );
        t.equal(round.status, 'completed');
        t.equal(round.transferred_units, pos.qty_left);
      }
      const trades = (await agent.get('/api/v1/trades')).body.trades;
      t.equal(trades.length, fills.length);
      const account = (await agent.get('/api/v1/account?limit=500')).body;
      t.equal(
        cents(account.balance),
        ledgerSumCents(account.ledger),
        'the balance is the sum of its ledger',
      );
      t.equal(account.settled_positions, fills.length);
      t.equal(
        cents(account.realized_pnl_total),
        trades.reduce((s: number, x: { realized_pnl: number }) => s + cents(x.realized_pnl), 0),
      );
    },
  );

  await t.test(
    'autonomous funding: on after 3 profitable trades, pay_from_balance funds at once, off again',
    async (t) => {
      const on = await holder.form(`/console/agents/${agent.agentId}/funding`, { enabled: 'on' });
      t.equal(on.status, 200, JSON.stringify(on.body));
      t.equal((await agent.get('/api/v1/agents/me')).body.autonomous_funding, true);
      // What the four trades left may not cover a unit of this session's cheapest deal (menus differ
      // by session, and the session by the day the test runs): the holder's money makes up the
      // difference, booked as the ledger books a top-up, so the order uses the balance to the cent.
      const open = await currentMenu(svc);
      const cheapest = open.deals.reduce((a, d) => (d.unit_cost < a.unit_cost ? d : a));
      const shortCents =
        cents(cheapest.unit_cost) +
        cents(fee) -
        cents((await agent.get('/api/v1/account')).body.balance);
      if (shortCents > 0) {
        const em = svc.orm.em.fork();
        await em.execute('update account set balance_cents = balance_cents + ? where id = ?', [
          shortCents,
          agent.accountId,
        ]);
        await em.execute(
          `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) select id, 'topup', ?, balance_cents, 'test:topup', ${instantSql()} from account where id = ?`,
          [shortCents, svc.services.clock.realNow(), agent.accountId],
        );
      }
      const r = await agent.post('/api/v1/orders', {
        market: MARKET,
        offer_key: cheapest.key,
        qty: 1,
        pay_from_balance: true,
      });
      t.equal(r.status, 201, JSON.stringify(r.body));
      const placed = r.body;
      t.equal(placed.status, 'paid', 'funded at once');
      t.equal(placed.payment_source, 'balance');
      const after = (await agent.get('/api/v1/account?limit=500')).body;
      t.equal(cents(after.balance), ledgerSumCents(after.ledger));
      t.ok(
        after.ledger.some(
          (e: { kind: string; ref: string }) =>
            e.kind === 'order_debit' && e.ref === `order:${placed.id}`,
        ),
      );
      const m = await currentMenu(svc);
      const dear = m.deals.reduce((a, d) =>
        cents(d.unit_cost) * d.max_qty > cents(a.unit_cost) * a.max_qty ? d : a,
      );
      if (cents(dear.unit_cost) * dear.max_qty > cents(after.balance)) {
        const poor = await agent.post('/api/v1/orders', {
          market: MARKET,
          offer_key: dear.key,
          qty: dear.max_qty,
          pay_from_balance: true,
        });
        t.equal(poor.status, 400, 'insufficient balance');
        const still = (await agent.get('/api/v1/account?limit=500')).body;
        t.equal(cents(still.balance), ledgerSumCents(still.ledger));
      }
      const off = await holder.form(`/console/agents/${agent.agentId}/funding`, { enabled: 'off' });
      t.equal(off.status, 200);
      const m2 = await currentMenu(svc);
      const refused = await agent.post('/api/v1/orders', {
        market: MARKET,
        offer_key: m2.deals[0].key,
        qty: 1,
        pay_from_balance: true,
      });
      t.equal(refused.status, 403, 'switched off');
    },
  );
});
