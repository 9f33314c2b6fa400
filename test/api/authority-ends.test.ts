// Authority that ends (CONTRACT.md "Spending limits"): a holder revokes an agent's key for good on
// the console, and every front end refuses it, its streams end and its unpaid orders are withdrawn;
// a grant with an end allows nothing after it.
import t from 'tap';
import { CLOCKED_START_MS, startClockedService } from '../helpers/clocked.js';
import { startTestService } from '../helpers/service.js';
import { send, type Menu } from '../helpers/agents.js';
import { registerHolder, submit } from '../helpers/holders.js';
import { fundedAgent } from '../helpers/funded.js';
import { openSse } from '../helpers/sse.js';
import { connectAs } from '../helpers/ws.js';
import { within } from '../helpers/wait.js';

const MARKET = 'm15';
// One clocked service for both: the revocation reads the clock as it starts, the grant then moves it.
const c = await startClockedService(t, {}, { startMs: CLOCKED_START_MS });

t.test(
  'a holder revokes a key for good: every process refuses it, its streams end, its unpaid orders are withdrawn',
  async (t) => {
    const a = c.svc;
    const b = await startTestService(t, {}, { realMs: c.now }, a.config);
    const q = (sql: string, p: unknown[] = []) => a.orm.em.fork().execute(sql, p) as Promise<any[]>;
    const holder = await registerHolder(a);
    const agent = await fundedAgent(a, holder);
    const auth = { authorization: `Bearer ${agent.key}` };
    const m: Menu = (await send(a, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    const deal = { market: MARKET, offer_key: m.deals[0].key, qty: 1 };
    const unpaid = [
      (await agent.post('/api/v1/orders', deal)).body,
      (await send(b, 'POST', '/api/v1/orders', deal, auth)).body,
    ];
    t.same(
      unpaid.map((o) => o.status),
      ['awaiting_payment', 'awaiting_payment'],
    );
    const paid = (await agent.post('/api/v1/orders', { ...deal, pay_from_balance: true })).body;
    t.equal(paid.status, 'paid');
    t.equal((await send(b, 'GET', '/api/v1/agents/me', undefined, auth)).status, 200, 'b knows it');
    const head = (await agent.get('/api/v1/events?after=0&limit=1000')).body.next_after;
    const stream = await openSse(b, `/api/v1/events/stream?after=${head}`, auth, t);
    const ws = await connectAs(a, agent.key, t);
    ws.send({ op: 'subscribe', channels: ['account'], after: head });
    t.match(await ws.next(), { op: 'subscribed' });

    const other = await registerHolder(a);
    t.equal(
      (await submit(a, `/console/agents/${agent.agentId}/revoke`, {}, other.cookie)).status,
      404,
      "another holder's agent is not found",
    );
    const revoked = await submit(a, `/console/agents/${agent.agentId}/revoke`, {}, holder.cookie);
    t.equal(revoked.status, 200, JSON.stringify(revoked.body));
    t.same(revoked.body, {
      ok: true,
      agent_id: agent.agentId,
      revoked: true,
      revoked_at: c.now() / 1000,
      withdrawn_order_ids: unpaid.map((o) => o.id).sort((x, y) => x - y),
    });

    const me = await agent.get('/api/v1/agents/me');
    t.equal(me.status, 401, 'the process that revoked refuses the key at once');
    t.match(me.body.detail, /revoked by its holder/);
    t.match(
      await within(
        100,
        async () => {
          const r = await send(b, 'GET', '/api/v1/agents/me', undefined, auth);
          return r.status === 401 && r.body;
        },
        'the other process refuses the key',
      ),
      { detail: /revoked by its holder/ },
    );
    t.equal((await send(b, 'POST', '/api/v1/orders', deal, auth)).status, 401, 'no order either');
    t.match((await ws.closed).reason, /revoked/, "the WebSocket's account channel ended");
    t.equal((await ws.closed).code, 4401);
    const words: string[] = [];
    for (;;) {
      const next = await stream.next().catch(() => null);
      if (!next) break;
      if (next.comment) words.push(next.comment);
    }
    t.match(words.at(-1), /revoked by its holder/, "the other process's stream ended, saying why");

    const rows = await q(
      'select id::float8 as id, status, cancelled_by from orders where account_id = ? order by id',
      [agent.accountId],
    );
    t.same(
      rows.filter((r) => r.id !== paid.id),
      unpaid.map((o) => ({ id: o.id, status: 'cancelled', cancelled_by: 'holder' })),
      'its unpaid orders are withdrawn as the holder declining them',
    );
    t.equal(rows.find((r) => r.id === paid.id).status, 'paid', 'a paid order goes on');
    const cancelled = await q(
      `select data from account_event where account_id = ? and type = 'order.cancelled' order by id`,
      [agent.accountId],
    );
    t.same(
      cancelled.map((e) => [e.data.id, e.data.by]),
      unpaid.map((o) => [o.id, 'holder']),
      'each with its order.cancelled event',
    );
    const again = await submit(a, `/console/agents/${agent.agentId}/revoke`, {}, holder.cookie);
    t.match(
      again.body,
      { revoked: false, withdrawn_order_ids: [] },
      'revoking again changes nothing',
    );
    const reRegister = await send(a, 'POST', '/api/v1/agents/register', {
      token: agent.key,
      name: 'Again',
      recall_phrase: 'blue heron',
    });
    t.equal(reRegister.status, 409, 'the key cannot be registered again');
    t.match(reRegister.body.detail, /revoked by its holder/);
    const page = await a.get('/console/agents', { headers: { cookie: holder.cookie } });
    t.match(await page.text(), /Key revoked/, 'the agents tab says so');
  },
);

t.test('a grant with an end allows nothing after it, and is served as expired', async (t) => {
  const svc = c.svc;
  const holder = await registerHolder(svc);
  const writer = await fundedAgent(svc, holder);
  const owner = await fundedAgent(svc, holder);
  const cartId = (await owner.get('/api/v1/carts')).body.carts.find((x: any) => x.mine).id;
  // Connected as a checkout link would connect it: the holder's agents see the holder's carts.
  await svc.orm.em
    .fork()
    .execute('update cart set holder_id = (select id from holder where email = ?) where id = ?', [
      holder.email,
      cartId,
    ]);
  const ends = Math.floor(c.now() / 1000) + 60;
  t.equal(
    (
      await submit(
        svc,
        '/cart/grant',
        {
          agent_id: String(writer.agentId),
          level: 'write',
          expires_at: String(Math.floor(c.now() / 1000) - 1),
        },
        holder.cookie,
      )
    ).status,
    400,
    'an end in the past is refused',
  );
  const granted = await submit(
    svc,
    '/cart/grant',
    { agent_id: String(writer.agentId), level: 'write', expires_at: String(ends) },
    holder.cookie,
  );
  t.equal(granted.status, 200, JSON.stringify(granted.body));
  const events = (await writer.get('/api/v1/events?types=grant.changed')).body.events;
  t.match(events.at(-1).data.grant, {
    grant_id: granted.body.grant_id,
    expires_at: ends,
    expired: false,
  });
  const line = async () => {
    const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${MARKET}/deals`)).body;
    return writer.post(`/api/v1/carts/${cartId}/items`, {
      market: MARKET,
      offer_key: m.deals[0].key,
      qty: 1,
    });
  };
  t.equal((await line()).status, 201, 'the grant lets it write to a cart not its own');
  t.equal((await writer.get(`/api/v1/carts/${cartId}`)).body.permissions.write, true);
  c.advanceTo(ends * 1000);
  t.equal((await writer.get(`/api/v1/carts/${cartId}`)).body.permissions.write, false);
  t.equal((await line()).status, 403, 'at its end it allows nothing');
  const page = await (
    await svc.get('/console/agents', { headers: { cookie: holder.cookie } })
  ).text();
  t.match(page, /expired /, 'the agents tab shows it expired');
});
