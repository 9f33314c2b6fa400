// The site's front pages: home and markets list the four markets as they stand; opening a purchase
// link while logged in connects the agent to the holder.
import t from 'tap';
import { MARKETS, MARKET_IDS } from '../../../src/engine/index.js';
import { sharedWebService } from '../../helpers/web.js';
import { registerAgent, send } from '../../helpers/agents.js';
import { registerHolder } from '../../helpers/holders.js';

t.test('home, markets and connecting on a purchase link', async (t) => {
  const svc = await sharedWebService();
  for (const path of ['/', '/markets']) {
    const r = await svc.get(path);
    t.equal(r.status, 200, path);
    t.match(r.headers.get('content-type'), /text\/html/);
    const html = await r.text();
    for (const id of MARKET_IDS) {
      t.match(html, MARKETS[id].label, `${path} lists ${id}`);
      t.match(
        html,
        String(svc.services.supervisor.openTick(id)),
        `${path} shows the open session of ${id}`,
      );
    }
  }
  t.match(
    await (await svc.get('/')).text(),
    /href="\/register"/,
    'a visitor is offered to register',
  );

  const agent = await registerAgent(svc);
  const deal = (await send(svc, 'GET', '/api/v1/markets/h10/deals')).body.deals[0];
  const order = (await agent.post('/api/v1/orders', { market: 'h10', offer_key: deal.key, qty: 1 }))
    .body;
  await svc.get(new URL(order.purchase_url).pathname);
  t.equal(
    (await agent.get('/api/v1/agents/me')).body.paired,
    false,
    'an anonymous visit connects nothing',
  );
  const holder = await registerHolder(svc);
  const page = await svc.get(new URL(order.purchase_url).pathname, {
    headers: { cookie: holder.cookie },
  });
  t.equal(page.status, 200);
  t.equal(
    (await agent.get('/api/v1/agents/me')).body.paired,
    true,
    'opening the link while logged in connected the agent',
  );
  t.match(
    await (await svc.get('/', { headers: { cookie: holder.cookie } })).text(),
    /href="\/console"/,
  );
});

t.test('session lengths are shown as they run (SVC_TIME_SCALE divides them)', async (t) => {
  const { sessionLength } = await import('../../../src/market-data/live-session.js');
  t.equal(sessionLength(900), '15 min');
  t.equal(sessionLength(36000), '10 h');
  t.equal(sessionLength(900 / 900), '1 s');
  t.equal(sessionLength(2700 / 60), '45 s');
  t.equal(sessionLength(7200 / 60), '2 min');
});
