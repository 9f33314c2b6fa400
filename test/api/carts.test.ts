// Carts over HTTP (SPEC.md "Carts (key required)", "Cart line", "Cart connection, kind and funding
// switch"; CONTRACT.md "Carts", "Money"): an agent proposes lines, a holder connects, grants let
// other agents write and execute, checkouts charge once, stale lines are skipped. The clock is the
// test's: sessions end when the test says so.
import t from 'tap';
import { cartRef } from '../../actors/cart/messages.js';
import { holderRef } from '../../actors/holder/messages.js';
import { MARKETS } from '../../src/engine/index.js';
import { startTestService } from '../helpers/service.js';
import { ledgerSumCents, registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { registerHolder, type TestHolder } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';
import { instantSql } from '../../actors/runtime/sql.js';

let nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const rt = svc.services.runtime;

const call = (
  a: TestAgent,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) => send(svc, method, path, body, { authorization: `Bearer ${a.key}`, ...headers });
const deals = async (market: string) =>
  (await send(svc, 'GET', `/api/v1/markets/${market}/deals?limit=20`)).body.deals as any[];
const holderId = async (h: TestHolder) =>
  (await q('select id::float8 as id from holder where email = ?', [h.email]))[0].id as number;
/** A holder connects an agent by opening its cart link while logged in. */
const connect = async (h: TestHolder, a: TestAgent) => {
  const link = (await call(a, 'GET', '/api/v1/cart')).body.checkout_url as string;
  const r = await svc.get(new URL(link).pathname, { headers: { cookie: h.cookie } });
  t.equal(r.status, 200, 'the cart link opens');
};
/** Turns autonomous funding on for an agent (the console's rule of 3 profitable trades is tested elsewhere). */
const fundingOn = (a: TestAgent) =>
  q(
    `update agent set autonomous_funding = true, funding_changed_at = ${instantSql()} where id = ?`,
    [svc.services.clock.realNow(), a.agentId],
  );
/** Puts `cents` on an account through a ledger row, as a top-up would (at the service clock's now). */
async function credit(accountId: number, cents: number) {
  await q('update account set balance_cents = balance_cents + ? where id = ?', [cents, accountId]);
  await q(
    `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) select id, 'topup', ?, balance_cents, 'test:fixture', ${instantSql()} from account where id = ?`,
    [cents, svc.services.clock.realNow(), accountId],
  );
}
const grant = (
  h: TestHolder,
  hid: number,
  g: {
    agentId?: number | null;
    cartId?: number | null;
    level?: 'write' | 'execute';
    payWith?: 'balance' | 'card';
    cardId?: number | null;
  },
) =>
  rt.ask(holderRef(h.email), {
    kind: 'grant',
    holderId: hid,
    agentId: g.agentId ?? null,
    cartId: g.cartId ?? null,
    level: g.level ?? 'write',
    payWith: g.payWith ?? 'balance',
    cardId: g.cardId ?? null,
    note: '',
  });
async function ledgerBalanced(t: Tap.Test, accountId: number) {
  const [a] = await q(
    'select balance_cents::float8 as b, (select coalesce(sum(amount_cents), 0)::float8 from ledger where account_id = a.id) as s from account a where id = ?',
    [accountId],
  );
  t.equal(a.b, a.s, `account ${accountId}: balance = sum of its ledger`);
}

t.test(
  'an unconnected agent proposes lines: pending_pairing, clamped, notes, velocity only where quoted',
  async (t) => {
    const a = await registerAgent(svc, { name: 'Proposer' });
    const empty = await call(a, 'GET', '/api/v1/cart');
    t.equal(empty.status, 200);
    t.same(empty.body.items, []);
    t.equal(empty.body.paired, false);
    t.equal(empty.body.kind, 'trade');
    t.match(empty.body.checkout_url, /\/carts\/[A-Za-z0-9_-]+$/);

    const [m15] = await deals('m15');
    const r = await call(a, 'POST', '/api/v1/cart/items', {
      market: 'm15',
      offer_key: m15.key,
      qty: 10_000,
      note: 'cheap and fast',
    });
    t.equal(r.status, 201);
    t.equal(r.body.status, 'pending_pairing');
    t.equal(r.body.paired, false);
    t.equal(r.body.qty, m15.max_qty, 'qty clamped to max_qty');
    t.equal(r.body.clamped, true);
    t.equal(r.body.checkout_url, empty.body.checkout_url);
    t.notOk('other_carts' in r.body, 'no other carts before a holder connects');

    const [h2] = await deals('h2');
    t.equal(
      (await call(a, 'POST', '/api/v1/cart/items', { market: 'h2', offer_key: h2.key, qty: 1 }))
        .status,
      201,
    );
    const cart = (await call(a, 'GET', '/api/v1/cart')).body;
    t.equal(cart.items.length, 2);
    const [l15, l2] = cart.items;
    t.equal(l15.note, 'cheap and fast');
    t.equal(l15.status, 'pending_pairing');
    t.equal(l15.stale, false);
    t.equal(l15.unit_cost, m15.unit_cost);
    t.equal(
      l15.total,
      Math.round(l15.qty * (m15.unit_cost * 100 + MARKETS.m15.fees.fulfilment_per_unit_cents)) /
        100,
      'total = qty x (unit cost + fee)',
    );
    t.ok('sales_velocity' in l15, 'a quoting market carries velocity');
    t.notOk('sales_velocity' in l2, 'a ranking market does not');
    t.same(l15.proposed_by, { kind: 'agent', agent_id: a.agentId, name: 'Proposer' });

    // The same deal again adds to its line.
    const again = await call(a, 'POST', '/api/v1/cart/items', {
      market: 'h2',
      offer_key: h2.key,
      qty: 2,
    });
    t.equal(again.body.item_id, l2.id);
    t.equal(again.body.qty, Math.min(3, h2.max_qty));

    t.equal((await call(a, 'DELETE', `/api/v1/cart/items/${l2.id}`)).status, 200);
    t.equal(
      (await call(a, 'DELETE', `/api/v1/cart/items/${l2.id}`)).status,
      404,
      'a removed line is gone',
    );
    t.equal((await call(a, 'GET', '/api/v1/cart')).body.items.length, 1);
  },
);

t.test(
  'refusals: unknown market or deal, bad qty and note, another body type, carts of others',
  async (t) => {
    const a = await registerAgent(svc);
    const b = await registerAgent(svc);
    const [d] = await deals('m45');
    const cases: [unknown, number][] = [
      [{ market: 'x1', offer_key: d.key, qty: 1 }, 404],
      [{ market: 'm45', offer_key: 'nosuchdeal', qty: 1 }, 404],
      [{ market: 'm45', offer_key: d.key, qty: 0 }, 422],
      [{ market: 'm45', offer_key: d.key, qty: 1, note: 'x'.repeat(256) }, 422],
      [{ market: 'm45', qty: 1 }, 422],
    ];
    for (const [body, status] of cases)
      t.equal(
        (await call(a, 'POST', '/api/v1/cart/items', body)).status,
        status,
        JSON.stringify(body).slice(0, 60),
      );
    const text = await svc.get('/api/v1/cart/items', {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'text/plain' },
      body: 'hi',
    });
    t.equal(text.status, 415);
    t.equal((await send(svc, 'GET', '/api/v1/cart')).status, 401, 'a key is required');
    const bCart = (await call(b, 'GET', '/api/v1/cart')).body.id;
    t.equal(
      (await call(a, 'GET', `/api/v1/carts/${bCart}`)).status,
      404,
      "an unconnected agent's cart is invisible to others",
    );
    t.equal(
      (
        await call(a, 'POST', `/api/v1/carts/${bCart}/items`, {
          market: 'm45',
          offer_key: d.key,
          qty: 1,
        })
      ).status,
      404,
    );
    t.equal((await call(a, 'POST', `/api/v1/carts/${bCart}/checkout`)).status, 404);
    t.equal((await call(a, 'GET', '/api/v1/carts/999999')).status, 404);
    const made = await call(a, 'POST', '/api/v1/carts', { name: 'Second' });
    t.equal(made.status, 201);
    t.equal(made.body.kind, 'trade');
    t.equal((await call(a, 'POST', '/api/v1/carts', { name: '' })).status, 422);
    const mine = (await call(a, 'GET', '/api/v1/carts')).body.carts;
    t.same(
      mine.map((c: any) => c.mine),
      [true, true],
      'two carts of its own',
    );
    t.same(mine[1].permissions, {
      read: true,
      write: true,
      execute: false,
      execute_pay_with: null,
      execute_card_id: null,
      autonomous_funding: false,
      execute_note: mine[1].permissions.execute_note,
    });
    t.match(mine[1].permissions.execute_note, /autonomous funding/);
    const link = await call(a, 'POST', '/api/v1/cart/link');
    t.equal(link.status, 201);
    t.match(link.body.pairing_url, /\/link\//);
  },
);

t.test(
  'connection: the holder opens the link; every agent of the holder sees every cart; writes need grants',
  async (t) => {
    const h = await registerHolder(svc);
    const hid = await holderId(h);
    const a = await registerAgent(svc, { name: 'Alpha' });
    const b = await registerAgent(svc, { name: 'Beta' });
    const [d] = await deals('m45');
    const before = await call(a, 'POST', '/api/v1/cart/items', {
      market: 'm45',
      offer_key: d.key,
      qty: 1,
    });
    t.equal(before.body.status, 'pending_pairing');
    await connect(h, a);
    await connect(h, b);
    const aCart = (await call(a, 'GET', '/api/v1/cart')).body;
    t.equal(aCart.paired, true);
    t.equal(
      aCart.items[0].status,
      'in_cart',
      "the waiting line is in the holder's cart once connected",
    );
    const added = await call(a, 'POST', '/api/v1/cart/items', {
      market: 'm45',
      offer_key: (await deals('m45'))[1].key,
      qty: 1,
    });
    t.equal(added.body.status, 'in_cart');
    t.equal(added.body.paired, true);
    t.equal(added.body.other_carts, 2, "the holder's own cart and Beta's");

    const seenByB = (await call(b, 'GET', '/api/v1/carts')).body.carts;
    const aEntry = seenByB.find((c: any) => c.id === aCart.id);
    t.ok(aEntry, "Beta sees Alpha's cart");
    t.same(
      [aEntry.mine, aEntry.associated, aEntry.permissions.read, aEntry.permissions.write],
      [false, true, true, false],
    );
    t.same(aEntry.owner, { kind: 'agent', agent_id: a.agentId, name: 'Alpha' });
    const own = seenByB.find((c: any) => c.owner.kind === 'holder');
    t.ok(own, "and the holder's own cart");
    const me = (await call(b, 'GET', '/api/v1/agents/me')).body;
    t.equal(me.carts.visible, seenByB.length, '/agents/me counts the carts GET /carts lists');
    t.same(
      me.carts.mine.map((c: any) => c.id),
      seenByB.filter((c: any) => c.mine).map((c: any) => c.id),
    );
    const recall = await send(svc, 'POST', '/api/v1/agents/recall', { key_id: b.key.slice(0, 20) });
    t.equal(recall.body.carts_visible, seenByB.length, 'and so does the recall');
    // `since` is real unix time on the service's clock, as every time the service serves (it stamps the changes with that clock).
    t.equal(
      (await call(b, 'GET', `/api/v1/carts?since=${svc.services.clock.realNow() - 3600}`)).body
        .carts.length,
      3,
      'all three changed within the hour',
    );
    // The three carts' changes are dated a minute back (the service's stamps, read from the rows):
    // `mark` lies between them and Beta's next change, which the service stamps with its clock's now.
    const ids = seenByB.map((c: any) => c.id);
    const [{ mark }] = await q(
      `with moved as (update cart set updated_at = updated_at - interval '1 minute' where id in (${ids.map(Number).join(', ')}) returning updated_at)
     select extract(epoch from max(updated_at))::float8 + 1 as mark from moved`,
    );
    const halfMinuteAgo = svc.services.clock.realNow() - 30;
    t.ok(mark < halfMinuteAgo, "the mark is well before the service clock's now");
    await call(b, 'POST', '/api/v1/cart/items', { market: 'm45', offer_key: d.key, qty: 1 });
    t.same(
      (await call(a, 'GET', `/api/v1/carts?since=${mark}`)).body.carts.map(
        (c: any) => c.owner.agent_id,
      ),
      [b.agentId],
      'only the cart changed since',
    );

    const [d2] = await deals('h10');
    const refused = await call(b, 'POST', `/api/v1/carts/${aCart.id}/items`, {
      market: 'h10',
      offer_key: d2.key,
      qty: 1,
    });
    t.equal(refused.status, 403, "writing to another agent's cart needs a grant");
    t.match(refused.body.detail, /write grant/);
    const { grant_id } = await grant(h, hid, {
      agentId: b.agentId,
      cartId: aCart.id,
      level: 'write',
    });
    const ok = await call(b, 'POST', `/api/v1/carts/${aCart.id}/items`, {
      market: 'h10',
      offer_key: d2.key,
      qty: 1,
      note: 'from Beta',
    });
    t.equal(ok.status, 201);
    const line = (await call(a, 'GET', `/api/v1/carts/${aCart.id}`)).body.items.find(
      (i: any) => i.id === ok.body.item_id,
    );
    t.same(line.proposed_by, { kind: 'agent', agent_id: b.agentId, name: 'Beta' });
    t.equal(
      (await call(b, 'PUT', `/api/v1/carts/${aCart.id}/items/${line.id}`, { qty: 2 })).body.qty,
      Math.min(2, line.max_qty),
    );
    await rt.ask(holderRef(h.email), { kind: 'revoke', holderId: hid, grantId: grant_id });
    t.equal(
      (await call(b, 'PUT', `/api/v1/carts/${aCart.id}/items/${line.id}`, { qty: 1 })).status,
      403,
      'revoked: no more writes',
    );
    t.equal(
      (await call(a, 'PUT', `/api/v1/carts/${aCart.id}/items/${line.id}`, { qty: 0 })).body.removed,
      true,
      'qty 0 removes the line',
    );
  },
);

t.test(
  'the permission matrix of checkout: switch off, own cart from own balance, execute grants, revoked',
  async (t) => {
    const h = await registerHolder(svc);
    const hid = await holderId(h);
    const a = await registerAgent(svc, { name: 'Own' });
    const b = await registerAgent(svc, { name: 'Other' });
    await connect(h, a);
    await connect(h, b);
    const aCart = (await call(a, 'GET', '/api/v1/cart')).body.id;
    const [d] = await deals('h10');
    await call(a, 'POST', '/api/v1/cart/items', { market: 'h10', offer_key: d.key, qty: 1 });

    const off = await call(a, 'POST', `/api/v1/carts/${aCart}/checkout`);
    t.equal(off.status, 403, 'autonomous funding off');
    t.match(off.body.detail, /autonomous funding/);
    await fundingOn(a);
    const perms = (await call(a, 'GET', `/api/v1/carts/${aCart}`)).body.permissions;
    t.same(
      [perms.execute, perms.execute_pay_with, perms.autonomous_funding],
      [true, 'balance', true],
      'own cart from own balance',
    );
    t.equal(
      (await call(a, 'POST', `/api/v1/carts/${aCart}/checkout`, { pay_with: 'card' })).status,
      403,
      'no grant: no card',
    );
    const poor = await call(a, 'POST', `/api/v1/carts/${aCart}/checkout`);
    t.equal(poor.status, 400, 'the balance does not cover the line');
    t.equal(
      (await q('select count(*)::int as n from orders where account_id = ?', [a.accountId]))[0].n,
      0,
      'nothing placed',
    );

    await fundingOn(b);
    t.equal(
      (await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`)).status,
      403,
      "another agent's cart needs an execute grant",
    );
    const wr = await grant(h, hid, { agentId: b.agentId, level: 'write' });
    t.equal(
      (await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`)).status,
      403,
      'a write grant does not execute',
    );
    const ex = await grant(h, hid, { agentId: b.agentId, cartId: aCart, level: 'execute' });
    const bPerms = (await call(b, 'GET', `/api/v1/carts/${aCart}`)).body.permissions;
    t.same([bPerms.write, bPerms.execute, bPerms.execute_pay_with], [true, true, 'balance']);
    await q('update agent set autonomous_funding = false where id = ?', [b.agentId]);
    t.equal(
      (await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`)).status,
      403,
      'an execute grant takes effect only with the switch on',
    );
    await fundingOn(b);

    await credit(a.accountId, 1_000_000);
    const paid = await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`, undefined, {
      'idempotency-key': 'pay-1',
    });
    t.equal(paid.status, 200);
    t.equal(paid.body.paid_with, 'balance');
    t.equal(paid.body.orders.length, 1);
    t.equal(
      paid.body.orders[0].account_id,
      a.accountId,
      "the order is on the proposing agent's account",
    );
    t.equal(paid.body.orders[0].status, 'paid');
    // Its confirmation page says no card paid, whatever its address claims.
    const link = (await call(a, 'GET', '/api/v1/cart')).body.checkout_url as string;
    const done = await svc.get(
      `${new URL(link).pathname}/done?orders=${paid.body.orders[0].id}&card=4242&saved=1`,
      { headers: { cookie: h.cookie } },
    );
    const page = await done.text();
    t.equal(done.status, 200);
    t.match(page, "the accounts' balances", 'paid from the balance');
    t.notMatch(page, /Card stored|•••• 4242/, 'no card in it');
    t.equal(paid.body.fee, 15, "the month's participation fee with the first checkout");
    t.equal(paid.body.charged, Math.round((paid.body.total + 15) * 100) / 100);
    const replay = await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`, undefined, {
      'idempotency-key': 'pay-1',
    });
    t.equal(replay.headers.get('idempotent-replayed'), 'true');
    t.same(replay.body, paid.body);
    const twice = await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`);
    t.equal(twice.status, 409, 'nothing left to pay');
    const line = (await call(a, 'GET', `/api/v1/carts/${aCart}`)).body.items[0];
    t.same([line.status, line.order_id], ['ordered', paid.body.orders[0].id]);
    t.equal(
      (await call(a, 'DELETE', `/api/v1/carts/${aCart}/items/${line.id}`)).status,
      409,
      'an ordered line stays',
    );
    await ledgerBalanced(t, a.accountId);
    const ledger = (await call(a, 'GET', '/api/v1/account')).body.ledger.map((e: any) => e.kind);
    t.same(
      ledger.slice(0, 2).sort(),
      ['monthly_fee', 'order_debit'],
      'order debit and fee from the balance, no card charge',
    );

    await rt.ask(holderRef(h.email), { kind: 'revoke', holderId: hid, grantId: ex.grant_id });
    await call(a, 'POST', '/api/v1/cart/items', { market: 'h10', offer_key: d.key, qty: 1 });
    t.equal((await call(b, 'POST', `/api/v1/carts/${aCart}/checkout`)).status, 403, 'revoked');
    void wr;
  },
);

t.test(
  'a checkout of lines from 3 agents: one card charge per account, the fee once, orders on each account',
  async (t) => {
    const h = await registerHolder(svc);
    const hid = await holderId(h);
    const agents = [await registerAgent(svc), await registerAgent(svc), await registerAgent(svc)];
    for (const a of agents) await connect(h, a);
    const [card] = await q(
      `insert into card (holder_id, brand, last4, exp_month, exp_year, created_at) values (?, 'visa', '4242', 12, 2039, ${instantSql()}) returning id::float8 as id`,
      [hid, svc.services.clock.realNow()],
    );
    const holderCart = (await call(agents[0], 'GET', '/api/v1/carts')).body.carts.find(
      (c: any) => c.owner.kind === 'holder',
    ).id;
    await grant(h, hid, { cartId: holderCart, level: 'write' });
    const menu = await deals('m45');
    for (const [i, a] of agents.entries()) {
      const r = await call(a, 'POST', `/api/v1/carts/${holderCart}/items`, {
        market: 'm45',
        offer_key: menu[i].key,
        qty: 1,
      });
      t.equal(r.status, 201);
    }
    const runner = agents[0];
    await fundingOn(runner);
    await grant(h, hid, {
      agentId: runner.agentId,
      cartId: holderCart,
      level: 'execute',
      payWith: 'card',
      cardId: card.id,
    });
    const paid = await call(runner, 'POST', `/api/v1/carts/${holderCart}/checkout`, {
      pay_with: 'card',
    });
    t.equal(paid.status, 200, JSON.stringify(paid.body).slice(0, 200));
    t.equal(paid.body.paid_with, 'card');
    t.same(
      paid.body.orders.map((o: any) => o.account_id).sort(),
      agents.map((a) => a.accountId).sort(),
      "one order on each agent's account",
    );
    const rows = await q(
      `select account_id::float8 as a, kind, amount_cents::float8 as c from ledger where account_id = any(?::bigint[]) order by id`,
      [`{${agents.map((a) => a.accountId)}}`],
    );
    t.equal(
      rows.filter((r) => r.kind === 'card_charge').length,
      3,
      'one card charge per account funded',
    );
    t.equal(rows.filter((r) => r.kind === 'monthly_fee').length, 1, 'the fee once');
    const charged = rows.filter((r) => r.kind === 'card_charge').reduce((s, r) => s + r.c, 0);
    t.equal(
      charged,
      Math.round(paid.body.charged * 100),
      'the card was charged what the answer says',
    );
    for (const a of agents) {
      await ledgerBalanced(t, a.accountId);
      t.equal(
        ledgerSumCents((await call(a, 'GET', '/api/v1/account')).body.ledger),
        (await call(a, 'GET', '/api/v1/account')).body.balance * 100,
      );
    }
    const rounds = await q(
      'select count(*)::int as n from trade_round where account_id = any(?::bigint[])',
      [`{${agents.map((a) => a.accountId)}}`],
    );
    t.equal(rounds[0].n, 3, 'one round per account');
    // The rows written (account/order-write.ts, the batch's builder and the pay turn's payment): each round funded by card at the
    // checkout's instant and holding its orders' totals, the fee on the first account's round alone, every order paid by the holder
    // at that instant with the one receipt.
    const written = await q(
      `select r.status, r.source, r.amount_cents::float8 as amount, r.fee_amount_cents::float8 as fee, r.charged_cents::float8 as charged,
            r.funded_at = r.created_at as funded_then, (select sum(o.total_cents)::float8 from orders o where o.round_id = r.id) as orders_total,
            (select count(*)::int from orders o where o.round_id = r.id and o.status = 'paid' and o.payment_source = 'card' and o.paid_by_holder = ?
                and o.paid_at = r.funded_at and o.created_at = r.created_at and o.receipt = ?) as paid
       from trade_round r where r.account_id = any(?::bigint[]) order by r.account_id`,
      [hid, paid.body.receipt, `{${agents.map((a) => a.accountId)}}`],
    );
    t.same(
      written.map((r) => r.fee),
      [1500, 0, 0],
      "the month's fee on the first account's round alone",
    );
    for (const r of written) {
      t.same(
        { status: r.status, source: r.source, funded_then: r.funded_then, paid: r.paid },
        { status: 'funded', source: 'card', funded_then: true, paid: 1 },
        'funded with its order paid',
      );
      t.equal(r.amount, r.orders_total, "a round holds its orders' totals");
      t.equal(r.charged, r.amount + r.fee, 'a round charged its amount and its fee');
    }
  },
);

/** A holder's connected agent with autonomous funding on and 10 000.00 on its account, and its default cart. */
async function fundedAgent() {
  const h = await registerHolder(svc);
  const a = await registerAgent(svc);
  await connect(h, a);
  await fundingOn(a);
  await credit(a.accountId, 1_000_000);
  return { a, cart: (await call(a, 'GET', '/api/v1/cart')).body.id as number };
}

t.test(
  'a checkout naming no line (item_ids: []) says so: 422 at item_ids, nothing charged',
  async (t) => {
    const { a, cart } = await fundedAgent();
    const [d] = await deals('h10');
    const line = (
      await call(a, 'POST', '/api/v1/cart/items', { market: 'h10', offer_key: d.key, qty: 1 })
    ).body;
    const none = await call(a, 'POST', `/api/v1/carts/${cart}/checkout`, { item_ids: [] });
    t.equal(none.status, 422);
    t.match(none.body.detail, [{ loc: ['body', 'item_ids'], msg: /no line was selected/ }]);
    t.notMatch(JSON.stringify(none.body), /stale|session/, 'not a word about closed sessions');
    t.equal(
      (await q('select count(*)::int as n from orders where account_id = ?', [a.accountId]))[0].n,
      0,
      'nothing placed',
    );
    const paid = await call(a, 'POST', `/api/v1/carts/${cart}/checkout`, {
      item_ids: [line.item_id],
    });
    t.equal(paid.status, 200, 'naming the line pays it');
    t.same(paid.body.ordered_item_ids, [line.item_id]);
  },
);

t.test('two concurrent checkouts of one cart charge once', async (t) => {
  const { a, cart } = await fundedAgent();
  const menu = await deals('h10');
  for (const d of menu.slice(0, 3))
    await call(a, 'POST', '/api/v1/cart/items', { market: 'h10', offer_key: d.key, qty: 1 });
  const both = await Promise.all([
    call(a, 'POST', `/api/v1/carts/${cart}/checkout`),
    call(a, 'POST', `/api/v1/carts/${cart}/checkout`),
  ]);
  t.same(both.map((r) => r.status).sort(), [200, 409], 'one pays, the other finds nothing to pay');
  t.equal(
    (await q('select count(*)::int as n from orders where account_id = ?', [a.accountId]))[0].n,
    3,
    'three orders, once',
  );
  t.equal(
    (
      await q(
        `select count(*)::int as n from ledger where account_id = ? and kind = 'order_debit'`,
        [a.accountId],
      )
    )[0].n,
    3,
  );
  await ledgerBalanced(t, a.accountId);
});

t.test('an own cart buys the goods outright: inventory, no order, position or trade', async (t) => {
  const h = await registerHolder(svc);
  const hid = await holderId(h);
  const a = await registerAgent(svc);
  await connect(h, a);
  const cart = (await call(a, 'GET', '/api/v1/cart')).body.id;
  const [d] = await deals('m45');
  await call(a, 'POST', '/api/v1/cart/items', { market: 'm45', offer_key: d.key, qty: 2 });
  t.same(await rt.ask(cartRef(cart), { kind: 'setKind', holderId: hid, cartKind: 'own' }), {
    cart_id: cart,
    kind: 'own',
  });
  await fundingOn(a);
  const refused = await call(a, 'POST', `/api/v1/carts/${cart}/checkout`);
  t.equal(refused.status, 403, "an own cart is not paid from the agent's balance");
  const [desk] = await q(
    `select id::float8 as id from account where holder_id = ? and kind = 'manual'`,
    [hid],
  );
  await credit(desk.id, 100_000);
  await grant(h, hid, { agentId: a.agentId, level: 'execute' });
  const paid = await call(a, 'POST', `/api/v1/carts/${cart}/checkout`);
  t.equal(paid.status, 200, JSON.stringify(paid.body).slice(0, 200));
  t.equal(paid.body.bought_outright, true);
  t.same(paid.body.orders, []);
  t.equal(paid.body.inventory_item_ids.length, 1);
  const [item] = await q(
    'select account_id::float8 as a, holder_id::float8 as h, position_id, qty, source from inventory_item where id = ?',
    [paid.body.inventory_item_ids[0]],
  );
  t.same(item, { a: desk.id, h: hid, position_id: null, qty: 2, source: 'purchase' });
  t.equal(
    (
      await q('select count(*)::int as n from orders where account_id in (?, ?)', [
        a.accountId,
        desk.id,
      ])
    )[0].n,
    0,
    'no order',
  );
  const kinds = (
    await q('select kind from ledger where account_id = ? order by id', [desk.id])
  ).map((r) => r.kind);
  t.same(kinds, ['topup', 'order_debit', 'monthly_fee'], 'the Manual desk pays');
  await ledgerBalanced(t, desk.id);
  const line = (await call(a, 'GET', `/api/v1/carts/${cart}`)).body.items[0];
  t.same(
    [line.status, line.order_id, line.inventory_item_id],
    ['ordered', null, paid.body.inventory_item_ids[0]],
  );
  await t.rejects(
    rt.ask(cartRef(cart), { kind: 'setKind', holderId: hid, cartKind: 'trade' }),
    { status: 400 },
    'a paid cart keeps its kind',
  );
});

t.test(
  'stale lines: the clock ends their session; checkout skips them; a refresh re-maps them',
  async (t) => {
    const h = await registerHolder(svc);
    const a = await registerAgent(svc);
    await connect(h, a);
    await fundingOn(a);
    await credit(a.accountId, 10_000_000);
    const cart = (await call(a, 'GET', '/api/v1/cart')).body.id;
    const m15 = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=30')).body;
    const stale: { id: number; family: string; unit_cost: number }[] = [];
    for (const d of m15.deals) {
      const r = await call(a, 'POST', '/api/v1/cart/items', {
        market: 'm15',
        offer_key: d.key,
        qty: 1,
      });
      stale.push({ id: r.body.item_id, family: d.sku_family, unit_cost: d.unit_cost });
    }
    const [dh] = await deals('h10');
    const fresh = await call(a, 'POST', '/api/v1/cart/items', {
      market: 'h10',
      offer_key: dh.key,
      qty: 1,
    });
    nowMs = (m15.closes_at + 1) * 1000;
    const view = (await call(a, 'GET', `/api/v1/carts/${cart}`)).body;
    t.same(
      view.items.map((i: any) => i.stale),
      [...stale.map(() => true), false],
    );
    t.same([view.open_items, view.stale_items], [1, stale.length]);
    const paid = await call(a, 'POST', `/api/v1/carts/${cart}/checkout`);
    t.equal(paid.status, 200);
    t.same(
      [paid.body.skipped_stale, paid.body.skipped_item_ids, paid.body.ordered_item_ids],
      [stale.length, stale.map((l) => l.id), [fresh.body.item_id]],
    );
    t.equal(paid.body.orders.length, 1, 'a stale line is never charged');
    t.equal(
      (await call(a, 'POST', `/api/v1/carts/${cart}/checkout`)).status,
      409,
      'only stale lines are left: nothing to pay',
    );

    await svc.services.supervisor.runDue();
    const next = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=500')).body;
    t.ok(next.tick > m15.tick, 'the next session is open');
    const menus = [{ market: 'm15', tick: next.tick, closesAt: next.closes_at }];
    const refreshed = await rt.ask(cartRef(cart), {
      kind: 'refresh',
      caller: { kind: 'agent', agentId: a.agentId },
      at: nowMs / 1000,
      menus,
    });
    const families = new Set(next.deals.map((d: any) => d.sku_family));
    const expectMoved = stale.filter((l) => families.has(l.family)).map((l) => l.id);
    t.ok(
      expectMoved.length > 0 && expectMoved.length < stale.length,
      'this seed has both cases: families on the next menu and families not',
    );
    t.same(
      refreshed.remapped.map((r: any) => r.item_id),
      expectMoved,
      'every line whose family is on the menu moves',
    );
    t.same(
      refreshed.still_stale,
      stale.filter((l) => !families.has(l.family)).map((l) => l.id),
      'the others stay stale',
    );
    const after = (await call(a, 'GET', `/api/v1/carts/${cart}`)).body.items;
    for (const l of stale.filter((x) => families.has(x.family))) {
      const line = after.find((i: any) => i.id === l.id);
      const deal = next.deals.find((d: any) => d.key === line.offer_key);
      t.same(
        [line.stale, line.tick, deal.sku_family],
        [false, next.tick, l.family],
        `line ${l.id}: a deal of its family on the current menu`,
      );
      const closest = Math.min(
        ...next.deals
          .filter((d: any) => d.sku_family === l.family)
          .map((d: any) => Math.abs(d.unit_cost - l.unit_cost)),
      );
      t.equal(Math.abs(deal.unit_cost - l.unit_cost), closest, 'the closest in landed cost');
    }
  },
);

t.test(
  "a line the holder picked is ordered on the holder's Manual desk and fills at the close",
  async (t) => {
    const h = await registerHolder(svc);
    const hid = await holderId(h);
    const [desk] = await q(
      `select id::float8 as id from account where holder_id = ? and kind = 'manual'`,
      [hid],
    );
    t.ok(desk, 'a Manual desk made at registration');
    const own = await rt
      .ask(cartRef(0), { kind: 'open', holderId: hid, at: nowMs / 1000 })
      .catch((e) => e);
    t.equal(own.status, 404, 'no cart 0');
    const [cart] = await q(
      'select id::float8 as id from cart where holder_id = ? and agent_id is null',
      [hid],
    );
    const menu = (await send(svc, 'GET', '/api/v1/markets/m15/deals?limit=1')).body;
    const d = menu.deals[0];
    const line = {
      market: 'm15',
      tick: menu.tick,
      idx: 0,
      offerKey: d.key,
      qty: 1,
      maxQty: d.max_qty,
      note: '',
      closesAt: menu.closes_at,
    };
    const holder = { kind: 'holder', holderId: hid } as const;
    const added = await rt.ask(cartRef(cart.id), {
      kind: 'add',
      caller: holder,
      line,
      at: nowMs / 1000,
    });
    t.equal(added.status, 'in_cart', "the holder's own cart is connected from the start");
    await credit(desk.id, 100_000);
    const paid = await rt.ask(cartRef(cart.id), {
      kind: 'checkout',
      caller: holder,
      payment: { method: 'balance' },
      at: nowMs / 1000,
      baseUrl: svc.config.baseUrl,
    });
    t.equal(paid.orders.length, 1);
    t.same(
      [paid.orders[0].account_id, paid.orders[0].agent_id, paid.orders[0].status],
      [desk.id, null, 'paid'],
      'on the Manual desk, no agent',
    );
    nowMs = (menu.closes_at + 1) * 1000;
    await svc.services.supervisor.runDue();
    const [o] = await q('select status, position_id::float8 as p from orders where id = ?', [
      paid.orders[0].id,
    ]);
    t.equal(o.status, 'filled', 'the close fills it');
    const [p] = await q('select account_id::float8 as a from position where id = ?', [o.p]);
    t.equal(p.a, desk.id, 'a position of the Manual desk');
    await ledgerBalanced(t, desk.id);
  },
);
