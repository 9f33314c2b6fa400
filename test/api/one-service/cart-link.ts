// The cart link handed out at registration: anyone sees the agent's declared identity; a logged-in
// holder who opens it connects the agent and sees its orders waiting for a payment; a second holder
// cannot take the agent over.
import t from 'tap';
import { sharedWebService } from '../../helpers/web.js';
import { registerAgent, send } from '../../helpers/agents.js';
import { registerHolder } from '../../helpers/holders.js';

t.test('GET /carts/{token}', async (t) => {
  const svc = await sharedWebService();
  const agent = await registerAgent(svc, {
    name: 'Cart scout',
    agent: { model: 'cart-model-7' },
    operator: { name: 'Cart Ops' },
  });
  const me = (await agent.get('/api/v1/agents/me')).body;
  const path = new URL(me.carts.mine[0].checkout_url).pathname;
  const page = (cookie?: string) =>
    svc
      .get(path, { headers: cookie ? { cookie } : {} })
      .then(async (r) => ({ status: r.status, html: await r.text() }));

  const anonymous = await page();
  t.equal(anonymous.status, 200);
  t.match(anonymous.html, /Cart scout/);
  t.match(anonymous.html, /cart-model-7/);
  t.match(anonymous.html, /Cart Ops/);
  t.match(anonymous.html, /login\?next=/);
  t.equal(
    (await agent.get('/api/v1/agents/me')).body.paired,
    false,
    'an anonymous visit connects nothing',
  );

  const holder = await registerHolder(svc);
  const first = await page(holder.cookie);
  t.match(first.html, /now connected to your account/);
  const paired = (await agent.get('/api/v1/agents/me')).body;
  t.equal(paired.paired, true);
  t.type(paired.holder.since, 'number');

  const m = (await send(svc, 'GET', '/api/v1/markets/h10/deals')).body;
  const order = await agent.post('/api/v1/orders', {
    market: 'h10',
    offer_key: m.deals[0].key,
    qty: 1,
  });
  t.equal(order.status, 201);
  const again = await page(holder.cookie);
  t.notMatch(again.html, /now connected/, 'connected once');
  t.match(
    again.html,
    new RegExp(new URL(order.body.purchase_url).pathname),
    'the waiting order links to its purchase page',
  );

  const intruder = await registerHolder(svc);
  const other = await page(intruder.cookie);
  t.match(other.html, /connected to another account holder/);
  t.notMatch(
    other.html,
    new RegExp(new URL(order.body.purchase_url).pathname),
    "another holder does not see the agent's orders",
  );
  t.equal((await agent.get('/api/v1/agents/me')).body.paired, true);

  const unknown = await svc.get('/carts/nope');
  t.equal(unknown.status, 404);
});
