// Authorisation of every holder form field that names an id: another holder's id
// answers 404 and nothing changes. Two holders, Ada (A) and Bob (B), each with their own things; Bob
// posts each form with one of Ada's ids (as a JSON client), and every table that holds anyone's
// money, cards, carts, grants, agents, goods or listings is the same afterwards.
//
// The holder forms (POST, auth holder or a logged-in holder) and their id fields:
//   /console/topup                    account_id, card_id
//   /console/payout                   account_id, card_id
//   /console/coins                    card_id
//   /console/cards/remove             card_id
//   /console/agents                   account_id
//   /console/agents/{agent_id}/funding  agent_id (path)
//   /cart/grant                       agent_id, cart_id, card_id
//   /cart/grant/revoke                grant_id
//   /cart/update, /cart/remove        item_id, cart_id
//   /cart/clear                       cart_id
//   /cart/checkout                    cart_id, card_id
//   /exchange/list                    item_id
//   /exchange/cancel                  listing_id
//   /exchange/buy                     card_id (listing_id names another holder's listing by design: buying it is the point)
//   /checkout/{token}/pay             card_id (the token is the purchase link itself)
//   /carts/{token}/pay                card_id (the token is the cart link itself), also signing in on the form
// and, though a link is not an id, the link of Ada's agent's cart (pay and kind): her cart is not Bob's.
// Forms without an id field: /cart/add, /cart/refresh, /cart/upload, /carts/{token}/kind (a link's
// token), /competitions/{id}/join (a public competition anyone may join), /register, /login.
import t from 'tap';
import { cartRef } from '../../actors/cart/messages.js';
import { startTestService } from '../helpers/service.js';
import { registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { getPage, postForm, registerHolder } from '../helpers/web.js';
import { T0 } from '../helpers/clock-rig.js';
import { GOLD_COINS } from '../../src/payments/terms.js';

const CARD = {
  method: 'new_card',
  number: '4242 4242 4242 4242',
  exp: '12/39',
  cvc: '123',
  holder: 'Card Holder',
};
const MARKET = 'h2';

// The clock stands still: no session closes while the forms are posted.
const nowMs = (T0 + 100) * 1000;
const svc = await startTestService(t, {}, { realMs: () => nowMs });
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const rt = svc.services.runtime;

/** Every row anyone's things live in: what a refused form must leave as it was. */
async function everything() {
  const tables = [
    'account',
    'ledger',
    'card',
    'cart',
    'cart_item',
    'cart_grant',
    'agent',
    'orders',
    'trade_round',
    'inventory_item',
    'exchange_listing',
    'payout',
    'gc_ledger',
    'monthly_fee',
    'competition_entry',
  ];
  const out: Record<string, unknown[]> = {};
  for (const name of tables) out[name] = await q(`select * from ${name} order by 1, 2`);
  out.holder = await q('select id, gc_balance_hundredths from holder order by id');
  return out;
}

const deskOf = async (holderId: number) =>
  (
    await q(`select id::float8 as id from account where holder_id = ? and kind = 'manual'`, [
      holderId,
    ])
  )[0].id as number;
const cardsOf = async (holderId: number) =>
  (await q('select id::float8 as id from card where holder_id = ? order by id', [holderId])).map(
    (r) => r.id as number,
  );

function ok(r: { status: number; body: any }, what: string) {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** An agent connected to the holder through its cart link, with one line in its cart. */
async function connectedAgent(
  cookie: string,
  offerKey: string,
): Promise<{ agent: TestAgent; cartId: number; itemId: number; token: string }> {
  const agent = await registerAgent(svc);
  const line = await agent.post('/api/v1/cart/items', {
    market: MARKET,
    offer_key: offerKey,
    qty: 1,
    note: 'a reason',
  });
  if (line.status !== 201)
    throw new Error(`cart item: ${line.status} ${JSON.stringify(line.body)}`);
  const path = new URL(line.body.checkout_url).pathname;
  if ((await getPage(svc, path, { cookie })).status !== 200) throw new Error('cart link');
  const cart = (await agent.get('/api/v1/cart')).body;
  if (!(await agent.get('/api/v1/agents/me')).body.paired) throw new Error('not connected');
  return { agent, cartId: cart.id, itemId: line.body.item_id, token: path.split('/').pop()! };
}

t.test("another holder's id in a form answers 404 and changes nothing", async (t) => {
  const deals = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals?limit=10`)).body.deals;
  t.ok(deals.length >= 6, 'deals on the menu');

  // Ada: her Manual desk with money and a stored card, an agent (its account, cart and line), her own
  // cart with a line, two owned items (one listed), a grant, a competition account.
  const ada = await registerHolder(svc, 'ada@example.com');
  const asAda = { cookie: ada.cookie, json: true };
  const deskA = await deskOf(ada.holderId);
  ok(
    await postForm(
      svc,
      '/console/topup',
      { account_id: deskA, amount: 500, ...CARD, save_card: 'on' },
      asAda,
    ),
    'ada tops up',
  );
  const [cardA] = await cardsOf(ada.holderId);
  const own = ok(
    await postForm(svc, '/cart/add', { market: MARKET, offer_key: deals[0].key }, asAda),
    'ada adds',
  );
  ok(
    await postForm(svc, '/cart/add', { market: MARKET, offer_key: deals[1].key }, asAda),
    'ada adds',
  );
  const cartOwnA = own.cart_id as number;
  await rt.ask(cartRef(cartOwnA), { kind: 'setKind', holderId: ada.holderId, cartKind: 'own' });
  const bought = ok(
    await postForm(svc, '/cart/checkout', { method: 'balance', cart_id: '' }, asAda),
    'ada buys outright',
  );
  const [itemListedA, itemA] = bought.inventory_item_ids as number[];
  t.ok(itemListedA && itemA, 'two owned items');
  const listingA = ok(
    await postForm(
      svc,
      '/exchange/list',
      { item_id: itemListedA, price: 5, currency: 'USD' },
      asAda,
    ),
    'ada lists',
  ).listing_id as number;
  const lineOwnA = ok(
    await postForm(svc, '/cart/add', { market: MARKET, offer_key: deals[2].key }, asAda),
    'ada adds',
  ).item_id as number;
  const agentA = await connectedAgent(ada.cookie, deals[3].key);
  const grantA = ok(
    await postForm(
      svc,
      '/cart/grant',
      {
        agent_id: agentA.agent.agentId,
        cart_id: agentA.cartId,
        level: 'execute',
        pay_with: 'card',
        card_id: cardA,
      },
      asAda,
    ),
    'ada grants',
  ).grant_id as number;
  const running = (await send(svc, 'GET', '/api/v1/competitions')).body.competitions.find(
    (c: any) => c.status === 'running',
  );
  const compA = running
    ? (ok(await postForm(svc, `/competitions/${running.id}/join`, {}, asAda), 'ada joins')
        .account_id as number)
    : null;

  // Bob: his own desk with money and a card, his own cart with a line, an agent with a line and an
  // order waiting for payment: every form he posts is one he could post with ids of his own.
  const bob = await registerHolder(svc, 'bob@example.com');
  const asBob = { cookie: bob.cookie, json: true };
  const deskB = await deskOf(bob.holderId);
  ok(
    await postForm(
      svc,
      '/console/topup',
      { account_id: deskB, amount: 50, ...CARD, save_card: 'on' },
      asBob,
    ),
    'bob tops up',
  );
  const [cardB] = await cardsOf(bob.holderId);
  const cartOwnB = ok(
    await postForm(svc, '/cart/add', { market: MARKET, offer_key: deals[4].key }, asBob),
    'bob adds',
  ).cart_id as number;
  const agentB = await connectedAgent(bob.cookie, deals[5].key);
  const order = await agentB.agent.post('/api/v1/orders', {
    market: MARKET,
    offer_key: deals[5].key,
    qty: 1,
  });
  t.equal(order.status, 201, "bob's agent orders");
  const purchasePath = new URL(order.body.purchase_url).pathname;

  const byCard = { method: 'card', card_id: cardA };
  const cases: [string, Record<string, string | number>, number][] = [
    ['/console/topup', { account_id: deskA, amount: 1, card_id: cardB }, deskA],
    [
      '/console/topup',
      { account_id: agentA.agent.accountId, amount: 1, card_id: cardB },
      agentA.agent.accountId,
    ],
    ['/console/topup', { account_id: deskB, amount: 1, card_id: cardA }, cardA],
    ['/console/payout', { account_id: deskA, amount: 20 }, deskA],
    ['/console/payout', { account_id: agentA.agent.accountId, amount: 20 }, agentA.agent.accountId],
    ['/console/payout', { account_id: deskB, amount: 20, card_id: cardA }, cardA],
    ['/console/coins', { pack: GOLD_COINS.packs[0], card_id: cardA }, cardA],
    ['/console/cards/remove', { card_id: cardA }, cardA],
    ['/console/agents', { name: 'Takeover', account_id: deskA }, deskA],
    [
      '/console/agents',
      { name: 'Takeover', account_id: agentA.agent.accountId },
      agentA.agent.accountId,
    ],
    [`/console/agents/${agentA.agent.agentId}/funding`, { enabled: 'on' }, agentA.agent.agentId],
    [`/console/agents/${agentA.agent.agentId}/funding`, { enabled: 'off' }, agentA.agent.agentId],
    ['/cart/grant', { agent_id: agentA.agent.agentId }, agentA.agent.agentId],
    ['/cart/grant', { agent_id: agentB.agent.agentId, cart_id: agentA.cartId }, agentA.cartId],
    ['/cart/grant', { cart_id: cartOwnA }, cartOwnA],
    [
      '/cart/grant',
      { agent_id: agentB.agent.agentId, level: 'execute', pay_with: 'card', card_id: cardA },
      cardA,
    ],
    ['/cart/grant', { agent_id: agentB.agent.agentId, card_id: cardA }, cardA],
    ['/cart/grant/revoke', { grant_id: grantA }, grantA],
    ['/cart/checkout', { ...CARD, cart_id: agentA.cartId }, agentA.cartId],
    ['/cart/checkout', { ...CARD, cart_id: cartOwnA }, cartOwnA],
    ['/cart/checkout', { method: 'balance', cart_id: cartOwnA }, cartOwnA],
    ['/cart/checkout', { ...byCard, cart_id: '' }, cardA],
    ['/cart/clear', { cart_id: agentA.cartId }, agentA.cartId],
    ['/cart/clear', { cart_id: cartOwnA }, cartOwnA],
    ['/exchange/list', { item_id: itemA, price: 1, currency: 'USD' }, itemA],
    ['/exchange/list', { item_id: itemA, price: 1, currency: 'GC' }, itemA],
    ['/exchange/list', { item_id: itemListedA, price: 1, currency: 'GC' }, itemListedA],
    ['/exchange/cancel', { listing_id: listingA }, listingA],
    ['/exchange/buy', { listing_id: listingA, ...byCard }, cardA],
    [`${purchasePath}/pay`, byCard, cardA],
    [`/carts/${agentB.token}/pay`, byCard, cardA],
    [
      `/carts/${agentB.token}/pay`,
      { ...byCard, auth: 'login', email: 'bob@example.com', password: 'correct horse 1' },
      cardA,
    ],
    // Ada's agent's cart link in Bob's hands: its cart is Ada's, so it is neither paid nor switched.
    [`/carts/${agentA.token}/pay`, CARD, agentA.cartId],
    [`/carts/${agentA.token}/kind`, { kind: 'own' }, agentA.cartId],
  ];
  if (compA !== null) {
    cases.push(
      ['/console/topup', { account_id: compA, amount: 1, card_id: cardB }, compA],
      ['/console/payout', { account_id: compA, amount: 20 }, compA],
      ['/console/agents', { name: 'Takeover', account_id: compA }, compA],
    );
  } else {
    t.comment('no running competition: its account is left out');
  }
  // A line of Ada's, named alone, with its own cart, or with a cart of Bob's.
  for (const [line, cart] of [
    [agentA.itemId, agentA.cartId],
    [lineOwnA, cartOwnA],
  ]) {
    for (const hint of [null, cart, cartOwnB]) {
      const cartField = hint === null ? {} : { cart_id: hint };
      cases.push([
        '/cart/update',
        { item_id: line, qty: 2, ...cartField },
        hint === cart ? cart : line,
      ]);
      cases.push(['/cart/remove', { item_id: line, ...cartField }, hint === cart ? cart : line]);
    }
  }

  let before = await everything();
  for (const [path, fields, id] of cases) {
    const what = `${path} ${JSON.stringify(fields)}`;
    const r = await postForm(svc, path, fields, asBob);
    t.equal(r.status, 404, `${what}: 404 (${JSON.stringify(r.body).slice(0, 160)})`);
    t.match(String(r.body?.detail), new RegExp(`\\b${id}\\b`), `${what}: the refusal names ${id}`);
    const after = await everything();
    t.same(after, before, `${what}: nothing changed`);
    before = after; // one form's change is its own failure, not every later form's
  }

  // The same forms with Bob's own ids go through: the 404s above are about whose the ids are.
  t.equal(
    (await postForm(svc, '/console/topup', { account_id: deskB, amount: 1, card_id: cardB }, asBob))
      .status,
    200,
    'bob tops up his desk with his card',
  );
  t.equal(
    (await postForm(svc, '/cart/update', { item_id: agentB.itemId, qty: 2 }, asBob)).status,
    200,
    "bob changes his agent's line",
  );
  t.equal(
    (
      await postForm(
        svc,
        '/cart/grant',
        {
          agent_id: agentB.agent.agentId,
          cart_id: agentB.cartId,
          level: 'execute',
          pay_with: 'card',
          card_id: cardB,
        },
        asBob,
      )
    ).status,
    200,
    'bob grants his agent his cart and card',
  );
  t.equal(
    (await postForm(svc, `${purchasePath}/pay`, { method: 'card', card_id: cardB }, asBob)).status,
    200,
    "bob pays his agent's order with his card",
  );
});
