// Signed approval receipts (CONTRACT.md "Signed approval receipts"): an order the holder pays on its
// purchase link, and a cart the holder pays, carry a compact JWS (EdDSA) that anyone verifies with
// jose against GET /.well-known/jwks.json; a tampered one fails; pay_from_balance orders carry none;
// after a rotation the new key signs and the old receipts still verify.
import t from 'tap';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent, send, type Menu } from '../helpers/agents.js';
import { APPROVED_CARD, registerHolder, submit } from '../helpers/holders.js';
import { receiptsRef } from '../../actors/receipts/messages.js';

const MARKET = 'm15';

t.test('receipts: signed, verifiable, tamper-evident, rotated', async (t) => {
  const c = await startClockedService(t);
  const svc = c.svc;
  const agent = await registerAgent(svc);
  const holder = await registerHolder(svc);
  const jwks = async () =>
    createLocalJWKSet((await send(svc, 'GET', '/.well-known/jwks.json')).body as JSONWebKeySet);
  const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
  const placed = (
    await agent.post('/api/v1/orders', { market: MARKET, offer_key: m.deals[0].key, qty: 2 })
  ).body;
  const paid = await holder.pay(placed.purchase_url);
  t.equal(paid.status, 200);
  const order = (await agent.get(`/api/v1/orders/${placed.id}`)).body;
  t.type(order.receipt, 'string');
  t.equal(paid.body.receipt, order.receipt, 'the payment answers with it');

  const keys = (await send(svc, 'GET', '/.well-known/jwks.json')).body.keys;
  t.equal(keys.length, 1, 'one key, made at the first start');
  t.match(keys[0], { kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
  t.notOk('d' in keys[0], 'never the private half');

  const { payload, protectedHeader } = await jwtVerify(order.receipt, await jwks(), {
    issuer: svc.config.baseUrl,
    algorithms: ['EdDSA'],
  });
  t.equal(protectedHeader.kid, keys[0].kid);
  t.match(payload, {
    iss: svc.config.baseUrl,
    orders: [
      {
        id: placed.id,
        market: MARKET,
        offer_key: placed.offer_key,
        qty: 2,
        total_amount: placed.total_amount,
      },
    ],
    charged: paid.body.charged,
    fee: paid.body.fee,
    participation_fee: paid.body.fee,
    currency: 'USD',
    method: 'card',
    approval: 'holder',
    agent_id: agent.agentId,
  });
  t.ok(
    paid.body.fee > 0,
    'the first payment of the month carried the participation fee, named so in the receipt',
  );
  t.match(payload.holder, /^h_[A-Za-z0-9_-]{22}$/, 'the holder, as an opaque id');
  t.type(payload.jti, 'string');
  t.equal(payload.iat, Math.floor(c.now() / 1000), "issued at the service clock's instant");

  const [h, body, sig] = order.receipt.split('.');
  const forged = Buffer.from(JSON.stringify({ ...payload, charged: 0.01 })).toString('base64url');
  await t.rejects(
    jwtVerify(`${h}.${forged}.${sig}`, await jwks()),
    'a tampered receipt does not verify',
  );
  const flipped = `${sig[0] === 'A' ? 'B' : 'A'}${sig.slice(1)}`;
  await t.rejects(jwtVerify(`${h}.${body}.${flipped}`, await jwks()), 'nor a tampered signature');

  const events = (await agent.get('/api/v1/events?types=order.paid')).body.events;
  t.equal(events[0].data.receipt, order.receipt, 'the order.paid event carries it');

  await t.test('a cart the holder pays carries one receipt for its orders', async (t) => {
    await agent.post('/api/v1/cart/items', { market: MARKET, offer_key: m.deals[1].key, qty: 1 });
    const token = new URL((await agent.get('/api/v1/cart')).body.checkout_url).pathname
      .split('/')
      .at(-1);
    const r = await submit(svc, `/carts/${token}/pay`, APPROVED_CARD, holder.cookie);
    t.equal(r.status, 200, JSON.stringify(r.body));
    const { payload: p } = await jwtVerify(r.body.receipt, await jwks());
    t.match(
      p,
      {
        approval: 'holder',
        method: 'card',
        orders: [{ offer_key: m.deals[1].key, qty: 1 }],
        holder: payload.holder,
      },
      'the same holder id',
    );
  });

  await t.test('after a rotation the new key signs and old receipts still verify', async (t) => {
    const rotated = await svc.services.runtime.ask(receiptsRef, { kind: 'rotate' });
    t.equal(rotated.created, true);
    const next = (
      await agent.post('/api/v1/orders', { market: MARKET, offer_key: m.deals[2].key, qty: 1 })
    ).body;
    t.equal((await holder.pay(next.purchase_url)).status, 200);
    const fresh = (await agent.get(`/api/v1/orders/${next.id}`)).body.receipt;
    t.equal(decodeProtectedHeader(fresh).kid, rotated.kid, 'signed with the new key');
    t.equal(
      (await send(svc, 'GET', '/.well-known/jwks.json')).body.keys.length,
      2,
      'both public keys published',
    );
    await jwtVerify(fresh, await jwks());
    const { payload: again } = await jwtVerify(order.receipt, await jwks());
    t.equal(again.jti, payload.jti, 'the old receipt verifies');
    const { payload: p2 } = await jwtVerify(fresh, await jwks());
    t.equal(p2.holder, payload.holder, 'the holder id stays the same across rotations');
  });
});
