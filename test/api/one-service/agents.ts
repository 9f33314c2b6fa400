// Agents over HTTP: key invention, every registration constraint, 409 on a taken key, recall,
// /agents/me, and the authorization matrix of every key-required route.
import t from 'tap';
import { sharedWebService } from '../../helpers/web.js';
import { registerAgent, send } from '../../helpers/agents.js';

const KEY = (c: string) => c.repeat(80).slice(0, 80);

t.test('agents: token, register, recall, me', async (t) => {
  const svc = await sharedWebService();

  await t.test('POST /agents/token invents an 80-character key and stores nothing', async (t) => {
    const a = await send(svc, 'POST', '/api/v1/agents/token');
    const b = await send(svc, 'POST', '/api/v1/agents/token');
    t.equal(a.status, 200);
    t.match(a.body.token, /^[A-Za-z0-9]{80}$/);
    t.equal(a.body.key_id, a.body.token.slice(0, 20));
    t.type(a.body.recall_phrase_suggestion, 'string');
    t.not(a.body.token, b.body.token);
    const known = await send(svc, 'POST', '/api/v1/agents/recall', { key_id: a.body.key_id });
    t.equal(known.body.known, false, 'an invented key is not registered');
  });

  await t.test('every registration constraint answers 422 at its field', async (t) => {
    const ok = { token: KEY('aB3'), name: 'n', recall_phrase: 'abc' };
    const cases: [string, Record<string, unknown>, (string | number)[]][] = [
      ['token missing', { token: undefined }, ['body', 'token']],
      ['token 79 chars', { token: KEY('x').slice(1) }, ['body', 'token']],
      ['token 81 chars', { token: KEY('x') + 'x' }, ['body', 'token']],
      ['token with a dash', { token: '-' + KEY('x').slice(1) }, ['body', 'token']],
      ['token not a string', { token: 5 }, ['body', 'token']],
      ['name missing', { name: undefined }, ['body', 'name']],
      ['name empty', { name: '' }, ['body', 'name']],
      ['name 121', { name: 'n'.repeat(121) }, ['body', 'name']],
      ['recall_phrase 2', { recall_phrase: 'ab' }, ['body', 'recall_phrase']],
      ['recall_phrase 121', { recall_phrase: 'a'.repeat(121) }, ['body', 'recall_phrase']],
      ['purpose 501', { purpose: 'p'.repeat(501) }, ['body', 'purpose']],
      ['contact 256', { contact: 'c'.repeat(256) }, ['body', 'contact']],
      ['agent.model 121', { agent: { model: 'm'.repeat(121) } }, ['body', 'agent', 'model']],
      ['agent.version 61', { agent: { version: 'v'.repeat(61) } }, ['body', 'agent', 'version']],
      ['agent.vendor 121', { agent: { vendor: 'v'.repeat(121) } }, ['body', 'agent', 'vendor']],
      ['agent.kind 33', { agent: { kind: 'k'.repeat(33) } }, ['body', 'agent', 'kind']],
      [
        'agent.instance 161',
        { agent: { instance: 'i'.repeat(161) } },
        ['body', 'agent', 'instance'],
      ],
      ['agent not an object', { agent: 'gpt' }, ['body', 'agent']],
      ['operator.type unknown', { operator: { type: 'robot' } }, ['body', 'operator', 'type']],
      ['operator.name 161', { operator: { name: 'n'.repeat(161) } }, ['body', 'operator', 'name']],
      [
        'operator.contact 256',
        { operator: { contact: 'c'.repeat(256) } },
        ['body', 'operator', 'contact'],
      ],
      [
        'operator.reference 161',
        { operator: { reference: 'r'.repeat(161) } },
        ['body', 'operator', 'reference'],
      ],
    ];
    for (const [name, change, loc] of cases) {
      const r = await send(svc, 'POST', '/api/v1/agents/register', { ...ok, ...change });
      t.equal(r.status, 422, name);
      t.ok(
        r.body.detail.some(
          (d: { loc: unknown[] }) => JSON.stringify(d.loc) === JSON.stringify(loc),
        ),
        `${name}: loc ${JSON.stringify(loc)} in ${JSON.stringify(r.body.detail)}`,
      );
    }
    const nothing = await send(svc, 'POST', '/api/v1/agents/recall', { key_id: KEY('aB3') });
    t.equal(nothing.body.known, false, 'no refused registration stored anything');
  });

  await t.test(
    'a full registration answers 201 with every field; the same key again is 409',
    async (t) => {
      const token = (await send(svc, 'POST', '/api/v1/agents/token')).body.token;
      const body = {
        token,
        name: 'Scout',
        recall_phrase: 'green kite',
        purpose: 'buy cheap bottles',
        contact: 'ops@example.org',
        agent: { model: 'gpt-x', version: '1', vendor: 'acme', kind: 'llm-agent', instance: 'i-1' },
        operator: {
          type: 'organisation',
          name: 'Acme',
          contact: 'ops@example.org',
          reference: 'r-7',
        },
      };
      const r = await send(svc, 'POST', '/api/v1/agents/register', body);
      t.equal(r.status, 201);
      for (const f of [
        'agent_id',
        'name',
        'key_id',
        'account_id',
        'trade_enabled',
        'cart_note',
        'cart',
        'keep',
      ])
        t.ok(f in r.body, f);
      t.equal(r.body.key_id, token.slice(0, 20));
      t.equal(r.body.cart.kind, 'trade');
      t.match(r.body.cart.checkout_url, new RegExp(`^${svc.config.baseUrl}/carts/`));
      t.equal(r.body.keep.recall_phrase, 'green kite');
      t.notOk(JSON.stringify(r.body).includes(token), 'the key itself is never shown');
      const again = await send(svc, 'POST', '/api/v1/agents/register', { ...body, name: 'Other' });
      t.equal(again.status, 409);
      t.type(again.body.detail, 'string');
      t.notOk(
        svc.logs.some((l) => JSON.stringify(l).includes(token.slice(20))),
        'the key never reaches the log',
      );

      const recall = await send(svc, 'POST', '/api/v1/agents/recall', {
        key_id: token,
        recall_phrase: 'green kite',
      });
      t.same(
        {
          known: recall.body.known,
          name: recall.body.name,
          recall_phrase: recall.body.recall_phrase,
          phrase_matches: recall.body.phrase_matches,
          connected: recall.body.connected_to_holder,
        },
        {
          known: true,
          name: 'Scout',
          recall_phrase: 'green kite',
          phrase_matches: true,
          connected: false,
        },
        'a whole key is truncated to its id',
      );
      t.equal(
        (
          await send(svc, 'POST', '/api/v1/agents/recall', {
            key_id: token.slice(0, 20),
            recall_phrase: 'nope',
          })
        ).body.phrase_matches,
        false,
      );
      t.equal((await send(svc, 'POST', '/api/v1/agents/recall', { key_id: 'short' })).status, 422);

      for (const header of [{ authorization: `Bearer ${token}` }, { 'x-api-token': token }]) {
        const me = await send(svc, 'GET', '/api/v1/agents/me', undefined, header);
        t.equal(me.status, 200);
        t.equal(me.body.key_id, token.slice(0, 20));
        t.equal(me.body.account_id, r.body.account_id);
        t.equal(me.body.balance, 0);
        t.equal(me.body.paired, false);
        t.equal(me.body.autonomous_funding, false);
        t.equal(me.body.carts.mine[0].id, r.body.cart.id);
        t.equal(me.body.profile.agent.model, 'gpt-x');
      }
    },
  );

  await t.test(
    'every key-required route answers 401 without a key, with a malformed or a wrong one',
    async (t) => {
      const agent = await registerAgent(svc);
      const wrong = agent.key.slice(0, 20) + 'x'.repeat(60);
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/v1/agents/me'],
        ['POST', '/api/v1/orders', { market: 'm15', offer_key: 'k', qty: 1 }],
        ['GET', '/api/v1/orders'],
        ['GET', '/api/v1/orders/1'],
        ['GET', '/api/v1/positions'],
        ['GET', '/api/v1/positions/1'],
        ['GET', '/api/v1/trades'],
        ['GET', '/api/v1/account'],
        ['GET', '/api/v1/account/ledger'],
        ['GET', '/api/v1/inventory'],
        ['GET', '/api/v1/rounds'],
      ];
      for (const [method, path, body] of routes) {
        for (const [why, headers] of [
          ['no key', {}],
          ['malformed', { authorization: 'Bearer short' }],
          ['unregistered', { 'x-api-token': KEY('Zq9') }],
          ['wrong secret', { authorization: `Bearer ${wrong}` }],
        ] as [string, Record<string, string>][]) {
          const r = await send(svc, method, path, body, headers);
          t.equal(r.status, 401, `${method} ${path}: ${why}`);
          t.type(r.body.detail, 'string');
        }
      }
    },
  );
});
