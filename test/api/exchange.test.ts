// The exchange on a real database (CONTRACT.md "Exchange"): holders list
// owned goods in the USD and Gold Coin books, cancel, and buy each other's listings; every balance
// touched equals its ledger, the item keeps its id and its provenance grows by one entry per sale;
// exactly one of two simultaneous buyers wins and the other is charged nothing. Owned goods are
// bought outright from an own cart (the quickest real way to mint them).
import t from 'tap';
import { cartRef } from '../../actors/cart/messages.js';
import { holderRef } from '../../actors/holder/messages.js';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder, type TestHolder } from '../helpers/holders.js';
import { T0 } from '../helpers/clock-rig.js';
import { instantSql } from '../../actors/runtime/sql.js';

const nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const rt = svc.services.runtime;
const call = (a: TestAgent, method: string, path: string, body?: unknown) =>
  send(svc, method, path, body, { authorization: `Bearer ${a.key}` });

type Party = TestHolder & { id: number; desk: number; agent: TestAgent };

/** A holder with a Manual desk holding `cents` (a ledger row, as a top-up books it) and a connected agent. */
async function party(cents = 0): Promise<Party> {
  const h = await registerHolder(svc);
  const [row] = await q(
    `select h.id::float8 as id, a.id::float8 as desk from holder h join account a on a.holder_id = h.id and a.kind = 'manual' where h.email = ?`,
    [h.email],
  );
  if (cents) {
    await q('update account set balance_cents = balance_cents + ? where id = ?', [cents, row.desk]);
    await q(
      `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) select id, 'topup', ?, balance_cents, 'test:fixture', ${instantSql()} from account where id = ?`,
      [cents, svc.services.clock.realNow(), row.desk],
    );
  }
  const agent = await registerAgent(svc);
  const link = (await call(agent, 'GET', '/api/v1/cart')).body.checkout_url as string;
  t.equal(
    (await svc.get(new URL(link).pathname, { headers: { cookie: h.cookie } })).status,
    200,
    'the agent is connected',
  );
  return { ...h, ...row, agent };
}

/** One owned item of `p`: its agent's cart, switched to own, checked out from the Manual desk. */
async function ownedItem(p: Party): Promise<number> {
  const cart = (await call(p.agent, 'GET', '/api/v1/cart')).body.id;
  const [d] = (await send(svc, 'GET', '/api/v1/markets/m45/deals?limit=5')).body.deals;
  t.equal(
    (await call(p.agent, 'POST', '/api/v1/cart/items', { market: 'm45', offer_key: d.key, qty: 1 }))
      .status,
    201,
  );
  await rt.ask(cartRef(cart), { kind: 'setKind', holderId: p.id, cartKind: 'own' });
  await q(
    `update agent set autonomous_funding = true, funding_changed_at = ${instantSql()} where id = ?`,
    [svc.services.clock.realNow(), p.agent.agentId],
  );
  await rt.ask(holderRef(p.email), {
    kind: 'grant',
    holderId: p.id,
    agentId: p.agent.agentId,
    cartId: cart,
    level: 'execute',
    payWith: 'balance',
    cardId: null,
    note: '',
  });
  const paid = await call(p.agent, 'POST', `/api/v1/carts/${cart}/checkout`);
  t.equal(paid.status, 200, JSON.stringify(paid.body).slice(0, 200));
  return paid.body.inventory_item_ids[0];
}

/** Every USD account touched: balance = Σ ledger; and every holder's Gold Coins = Σ gc_ledger. */
async function booksBalance(t: Tap.Test) {
  const usd = await q(
    `select a.id from account a where a.balance_cents <> (select coalesce(sum(amount_cents), 0) from ledger l where l.account_id = a.id)`,
  );
  t.same(usd, [], 'every USD balance = the sum of its ledger');
  const gc = await q(
    `select h.id from holder h where h.gc_balance_hundredths <> (select coalesce(sum(amount_hundredths), 0) from gc_ledger g where g.holder_id = h.id)`,
  );
  t.same(gc, [], 'every Gold Coin balance = the sum of its ledger');
}

const ledgerOf = async (accountId: number) =>
  await q(
    'select kind, amount_cents::float8 as amount, ref from ledger where account_id = ? and ref like ? order by id',
    [accountId, 'listing:%'],
  );
const coinsOf = async (holderId: number) =>
  (await q('select gc_balance_hundredths::float8 as b from holder where id = ?', [holderId]))[0]
    .b as number;

t.test(
  'USD: list, the listings API, buy from the balance; the seller is paid, the item moves with its provenance',
  async (t) => {
    const seller = await party(100_000);
    const buyer = await party(100_000);
    const itemId = await ownedItem(seller);
    const listed = await seller.form('/exchange/list', {
      item_id: String(itemId),
      price: '12.34',
      currency: 'USD',
    });
    t.equal(listed.status, 200, JSON.stringify(listed.body));
    const listingId = listed.body.listing_id;
    t.same(Object.keys(listed.body).sort(), ['listing_id', 'ok']);

    const api = await send(svc, 'GET', '/api/v1/exchange/listings?currency=USD');
    t.equal(api.status, 200);
    const l = api.body.listings.find((x: any) => x.id === listingId);
    t.same(
      [l.currency, l.price, l.item.id, l.item.source, l.item.simulated],
      ['USD', 12.34, itemId, 'purchase', false],
    );
    t.equal(
      (await send(svc, 'GET', '/api/v1/exchange/listings?currency=GC')).body.listings.find(
        (x: any) => x.id === listingId,
      ),
      undefined,
      'not in the GC book',
    );
    const inv = await call(seller.agent, 'GET', '/api/v1/inventory');
    t.same(
      inv.body.listings.map((x: any) => x.id),
      [listingId],
      "the seller's agent sees the holder's open listing",
    );

    const bought = await buyer.form('/exchange/buy', {
      listing_id: String(listingId),
      method: 'balance',
    });
    t.equal(bought.status, 200, JSON.stringify(bought.body));
    t.same(bought.body, { ok: true, item_id: itemId, paid: 12.34, fee: 15 });
    t.same(
      await ledgerOf(buyer.desk),
      [
        { kind: 'exchange_purchase', amount: -1234, ref: `listing:${listingId}` },
        { kind: 'monthly_fee', amount: -1500, ref: `listing:${listingId}` },
      ],
      "the buyer pays the price and the month's fee from the Manual desk",
    );
    t.same(await ledgerOf(seller.desk), [
      { kind: 'exchange_sale', amount: 1234, ref: `listing:${listingId}` },
    ]);
    const [item] = await q(
      'select holder_id::float8 as h, account_id::float8 as a, source, provenance from inventory_item where id = ?',
      [itemId],
    );
    t.same(
      [item.h, item.a, item.source],
      [buyer.id, buyer.desk, 'exchange'],
      "the item is the buyer's, same id",
    );
    t.equal(item.provenance.length, 2, 'one entry more');
    t.match(item.provenance[0], { kind: 'purchase' });
    t.same(item.provenance[1], {
      kind: 'exchange',
      at: nowMs / 1000,
      from_holder: seller.id,
      to_holder: buyer.id,
      price: 12.34,
      currency: 'USD',
      listing_id: listingId,
    });
    const buyerInv = await call(buyer.agent, 'GET', '/api/v1/inventory');
    t.ok(
      buyerInv.body.items.some((i: any) => i.id === itemId && i.provenance.length === 2),
      "the buyer's agent sees it",
    );
    t.notOk(
      (await call(seller.agent, 'GET', '/api/v1/inventory')).body.items.some(
        (i: any) => i.id === itemId,
      ),
      "the seller's no longer",
    );
    t.same(
      (await call(seller.agent, 'GET', '/api/v1/inventory')).body.listings,
      [],
      'and its listing is closed',
    );
    const again = await buyer.form('/exchange/buy', {
      listing_id: String(listingId),
      method: 'balance',
    });
    t.equal(again.status, 409, 'a sold listing is not sold again');
    await booksBalance(t);
  },
);

t.test('USD by a new card: card_charge then exchange_purchase; the fee once a month', async (t) => {
  const seller = await party(100_000);
  const buyer = await party();
  const itemId = await ownedItem(seller);
  const { listing_id } = (
    await seller.form('/exchange/list', { item_id: String(itemId), price: '5', currency: 'USD' })
  ).body;
  const bought = await buyer.form('/exchange/buy', {
    listing_id: String(listing_id),
    ...APPROVED_CARD,
  });
  t.equal(bought.status, 200, JSON.stringify(bought.body));
  t.same(bought.body, { ok: true, item_id: itemId, paid: 5, fee: 15 });
  t.same(
    (await ledgerOf(buyer.desk)).map((e: any) => [e.kind, e.amount]),
    [
      ['card_charge', 2000],
      ['exchange_purchase', -500],
      ['monthly_fee', -1500],
    ],
  );
  await booksBalance(t);
});

t.test(
  'Gold Coins: gc_spend and gc_sale, no fee; too few coins is 400 and nothing moves',
  async (t) => {
    const seller = await party(100_000);
    const buyer = await party();
    const poor = await party();
    const itemId = await ownedItem(seller);
    const { listing_id } = (
      await seller.form('/exchange/list', {
        item_id: String(itemId),
        price: '3.25',
        currency: 'GC',
      })
    ).body;
    const [s0, b0] = [await coinsOf(seller.id), await coinsOf(buyer.id)];
    await q('update holder set gc_balance_hundredths = 0 where id = ?', [poor.id]);
    await q(
      `insert into gc_ledger (holder_id, kind, amount_hundredths, balance_after_hundredths, ref, created_at) values (?, 'gc_spend', -500, 0, 'test:fixture', ${instantSql()})`,
      [poor.id, svc.services.clock.realNow()],
    );
    const refused = await poor.form('/exchange/buy', { listing_id: String(listing_id) });
    t.equal(refused.status, 400, 'not enough Gold Coins');
    t.equal(
      (await q(`select status from exchange_listing where id = ?`, [listing_id]))[0].status,
      'open',
      'still open',
    );
    const bought = await buyer.form('/exchange/buy', { listing_id: String(listing_id) });
    t.equal(bought.status, 200, JSON.stringify(bought.body));
    t.same(bought.body, { ok: true, item_id: itemId, paid: 3.25, fee: 0 });
    t.same([(await coinsOf(seller.id)) - s0, (await coinsOf(buyer.id)) - b0], [325, -325]);
    t.same(
      await q(
        `select kind, amount_hundredths::float8 as n from gc_ledger where ref = ? order by id`,
        [`listing:${listing_id}`],
      ),
      [
        { kind: 'gc_spend', n: -325 },
        { kind: 'gc_sale', n: 325 },
      ],
    );
    t.same(await ledgerOf(buyer.desk), [], 'no USD moves, no fee');
    const [item] = await q(
      'select holder_id::float8 as h, provenance from inventory_item where id = ?',
      [itemId],
    );
    t.equal(item.h, buyer.id);
    t.match(item.provenance[1], { kind: 'exchange', currency: 'GC', price: 3.25, listing_id });
    await booksBalance(t);
  },
);

t.test(
  "refusals: own listing 400, listed twice 409, another holder's item 404, cancel, 422s",
  async (t) => {
    const seller = await party(100_000);
    const other = await party();
    const itemId = await ownedItem(seller);
    const first = await seller.form('/exchange/list', {
      item_id: String(itemId),
      price: '1',
      currency: 'USD',
    });
    t.equal(first.status, 200);
    t.equal(
      (await seller.form('/exchange/list', { item_id: String(itemId), price: '2', currency: 'GC' }))
        .status,
      409,
      'listed twice (another book too)',
    );
    t.equal(
      (await other.form('/exchange/list', { item_id: String(itemId), price: '2', currency: 'USD' }))
        .status,
      404,
      "another holder's item",
    );
    t.equal(
      (
        await seller.form('/exchange/buy', {
          listing_id: String(first.body.listing_id),
          method: 'balance',
        })
      ).status,
      400,
      'your own listing',
    );
    t.equal(
      (
        await seller.form('/exchange/list', {
          item_id: String(itemId),
          price: '1.234',
          currency: 'USD',
        })
      ).status,
      422,
      'sub-cent price',
    );
    t.equal(
      (await other.form('/exchange/cancel', { listing_id: String(first.body.listing_id) })).status,
      404,
      'not your listing',
    );
    const cancelled = await seller.form('/exchange/cancel', {
      listing_id: String(first.body.listing_id),
    });
    t.same(
      [cancelled.status, cancelled.body],
      [200, { ok: true, listing_id: first.body.listing_id }],
    );
    t.equal(
      (
        await other.form('/exchange/buy', {
          listing_id: String(first.body.listing_id),
          method: 'balance',
        })
      ).status,
      409,
      'a cancelled listing',
    );
    t.equal(
      (await seller.form('/exchange/list', { item_id: String(itemId), price: '2', currency: 'GC' }))
        .status,
      200,
      'listed again after cancelling',
    );
    t.equal((await send(svc, 'GET', '/api/v1/exchange/listings?currency=EUR')).status, 422);
    t.equal((await send(svc, 'GET', '/api/v1/exchange/listings?limit=100000')).status, 422);
    t.equal((await seller.form('/exchange/buy', { listing_id: '999999999' })).status, 404);
  },
);

t.test(
  'two holders buy one listing at once: exactly one wins, the other 409 and not charged',
  async (t) => {
    const seller = await party(100_000);
    const a = await party(100_000);
    const b = await party(100_000);
    const itemId = await ownedItem(seller);
    const { listing_id } = (
      await seller.form('/exchange/list', {
        item_id: String(itemId),
        price: '7.5',
        currency: 'USD',
      })
    ).body;
    const [ra, rb] = await Promise.all(
      [a, b].map((p) =>
        p.form('/exchange/buy', { listing_id: String(listing_id), method: 'balance' }),
      ),
    );
    t.same([ra.status, rb.status].sort(), [200, 409]);
    const [winner, loser] = ra.status === 200 ? [a, b] : [b, a];
    t.match((ra.status === 409 ? ra : rb).body.detail, /no longer open/);
    t.same(await ledgerOf(loser.desk), [], 'the loser is charged nothing');
    t.equal((await ledgerOf(winner.desk)).length, 2, 'the winner paid price and fee');
    t.equal(
      (await q('select holder_id::float8 as h from inventory_item where id = ?', [itemId]))[0].h,
      winner.id,
    );
    await booksBalance(t);
  },
);

t.test(
  'listings filter by family and bound their count; the web page shows both books',
  async (t) => {
    const seller = await party(100_000);
    const viewer = await party();
    const itemId = await ownedItem(seller);
    const { listing_id } = (
      await seller.form('/exchange/list', { item_id: String(itemId), price: '4', currency: 'GC' })
    ).body;
    const [fam] = await q(`select history->>'sku_family' as f from inventory_item where id = ?`, [
      itemId,
    ]);
    const byFamily = (
      await send(svc, 'GET', `/api/v1/exchange/listings?family=${encodeURIComponent(fam.f)}`)
    ).body.listings;
    t.ok(
      byFamily.some((l: any) => l.id === listing_id) &&
        byFamily.every((l: any) => l.item.history.sku_family === fam.f),
    );
    t.same(
      (await send(svc, 'GET', '/api/v1/exchange/listings?family=no-such-family')).body.listings,
      [],
    );
    t.equal((await send(svc, 'GET', '/api/v1/exchange/listings?limit=1')).body.listings.length, 1);
    const page = await svc.get('/exchange', { headers: { cookie: viewer.cookie } });
    const html = await page.text();
    t.equal(page.status, 200);
    t.match(html, /USD book/);
    t.match(html, /Gold Coin book/);
    t.match(html, new RegExp(`name="listing_id" value="${listing_id}"`), 'a buy button');
    const mine = await (await svc.get('/exchange', { headers: { cookie: seller.cookie } })).text();
    t.match(mine, /action="\/exchange\/cancel"/, 'the seller gets a cancel button');
  },
);

t.test(
  'a retried buy (same Idempotency-Key) is answered again, charged once; a balance that does not cover it is 400',
  async (t) => {
    const seller = await party(100_000);
    const poor = await party(1_000);
    const buyer = await party(100_000);
    const itemId = await ownedItem(seller);
    const { listing_id } = (
      await seller.form('/exchange/list', { item_id: String(itemId), price: '20', currency: 'USD' })
    ).body;
    const short = await poor.form('/exchange/buy', {
      listing_id: String(listing_id),
      method: 'balance',
    });
    t.same([short.status, short.body], [400, { detail: 'insufficient balance' }]);
    t.same(await ledgerOf(poor.desk), [], 'nothing moved');
    const post = () =>
      svc.get('/exchange/buy', {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          cookie: buyer.cookie,
          'idempotency-key': `buy-${listing_id}`,
        },
        body: new URLSearchParams({ listing_id: String(listing_id), method: 'balance' }).toString(),
      });
    const first = await post();
    const firstBody = await first.json();
    const again = await post();
    t.same([first.status, again.status], [200, 200]);
    t.same(await again.json(), firstBody, 'the same answer');
    t.equal(again.headers.get('idempotent-replayed'), 'true');
    t.equal((await ledgerOf(buyer.desk)).length, 2, 'charged once: price and fee');
    await booksBalance(t);
  },
);

t.test("the console's inventory page: each owned item with its story", async (t) => {
  const seller = await party(100_000);
  const itemId = await ownedItem(seller);
  const page = await svc.get('/console/inventory', { headers: { cookie: seller.cookie } });
  t.equal(page.status, 200);
  const html = await page.text();
  t.match(html, new RegExp(`item ${itemId},`));
  t.match(html, /bought outright/, 'the story');
});
