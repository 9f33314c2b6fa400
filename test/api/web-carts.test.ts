// The holder's carts over HTTP as a JSON client (CONTRACT.md "Web form posts", "Carts", "Test
// cards"): lines of the holder's own cart added, changed, removed and cleared; a CSV upload with
// good and bad rows and the template; grants made and revoked, as the agent sees them; an agent's
// cart link paid by a holder who registers on the pay form itself, a declined card charging nothing,
// and the own kind buying outright.
import t from 'tap';
import { currentMenu, ledgerSumCents, registerAgent, type TestAgent } from '../helpers/agents.js';
import {
  getPage,
  postForm,
  registerHolder,
  sessionCookieOf,
  startWebService,
} from '../helpers/web.js';
import { withClock } from '../helpers/clocked.js';
import type { TestService } from '../helpers/service.js';

const CARD = {
  method: 'new_card',
  number: '4242 4242 4242 4242',
  exp: '12/39',
  cvc: '123',
  holder: 'Ada L',
};
// The service's clock stands still (the test drives it and never moves it): the deals picked stay on
// the menu for the whole test.
const MARKET = 'h2';

async function upload(
  svc: TestService,
  cookie: string,
  csv: string,
  headers: Record<string, string> = {},
) {
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'cart.csv');
  const res = await svc.get('/cart/upload', {
    method: 'POST',
    body: form,
    headers: { cookie, accept: 'application/json', ...headers },
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}

/** An agent with `n` lines in its default cart; its checkout link's path. */
async function agentWithLines(
  svc: TestService,
  deals: any[],
  n: number,
  profile: Record<string, unknown> = {},
): Promise<{ agent: TestAgent; path: string; token: string; itemIds: number[] }> {
  const agent = await registerAgent(svc, profile);
  const itemIds: number[] = [];
  let url = '';
  for (const d of deals.slice(0, n)) {
    const r = await agent.post('/api/v1/cart/items', {
      market: MARKET,
      offer_key: d.key,
      qty: 1,
      note: `why ${d.key.slice(0, 6)}`,
    });
    if (r.status !== 201) throw new Error(`cart item: ${r.status} ${JSON.stringify(r.body)}`);
    itemIds.push(r.body.item_id);
    url = r.body.checkout_url;
  }
  const path = new URL(url).pathname;
  return { agent, path, token: path.split('/').pop()!, itemIds };
}

t.test("the holder's carts on the web", async (t) => {
  const { svc } = await withClock((realMs) =>
    startWebService(t, { SVC_TIME_SCALE: '1' }, { realMs }),
  );
  const db = (sql: string, params: unknown[] = []) => svc.orm.em.fork().execute(sql, params);
  const deals = (await currentMenu(svc, MARKET, 600)).deals;
  const ada = await registerHolder(svc, 'ada@example.com');
  const bob = await registerHolder(svc, 'bob@example.com');
  const asAda = { cookie: ada.cookie, json: true };

  await t.test("add, update, remove and clear lines of the holder's own cart", async (t) => {
    const [d0, d1] = deals;
    const added = await postForm(
      svc,
      '/cart/add',
      { market: MARKET, offer_key: d0.key, qty: 2 },
      asAda,
    );
    t.equal(added.status, 200);
    t.match(added.body, { ok: true, qty: 2 });
    const { cart_id: cartId, item_id: itemId } = added.body;
    t.type(itemId, 'number');

    const browser = await postForm(
      svc,
      '/cart/add',
      { market: MARKET, offer_key: d1.key },
      { cookie: ada.cookie },
    );
    t.equal(browser.status, 303, 'a browser is sent on');
    t.equal(browser.location, '/cart');
    const page = await getPage(svc, '/cart', { cookie: ada.cookie });
    t.equal(page.status, 200);
    for (const d of [d0, d1]) t.match(page.text, d.key, 'the page lists each line');
    t.match(page.text, /closes in \d+ s \(\d\d:\d\d:\d\d UTC\)/, 'with the countdown to its close');

    const updated = await postForm(svc, '/cart/update', { item_id: itemId, qty: 1 }, asAda);
    t.same(updated.body, { ok: true, cart_id: cartId, item_id: itemId, qty: 1 });
    const clamped = await postForm(
      svc,
      '/cart/update',
      { item_id: itemId, qty: d0.max_qty + 50 },
      asAda,
    );
    t.same(
      clamped.body,
      { ok: true, cart_id: cartId, item_id: itemId, qty: d0.max_qty },
      "qty clamped to the deal's max_qty",
    );

    const bobs = await postForm(
      svc,
      '/cart/remove',
      { item_id: itemId },
      { cookie: bob.cookie, json: true },
    );
    t.equal(bobs.status, 404, 'another holder does not find the line');
    const hinted = await postForm(
      svc,
      '/cart/remove',
      { item_id: itemId, cart_id: cartId },
      { cookie: bob.cookie, json: true },
    );
    t.equal(hinted.status, 404, 'naming the cart does not help: its actor checks who asks');

    const removed = await postForm(svc, '/cart/remove', { item_id: itemId }, asAda);
    t.same(removed.body, { ok: true, cart_id: cartId, item_id: null, qty: 0 });
    t.equal((await postForm(svc, '/cart/remove', { item_id: itemId }, asAda)).status, 404, 'gone');

    const cleared = await postForm(svc, '/cart/clear', {}, asAda);
    t.same(
      cleared.body,
      { ok: true, cart_id: cartId, removed: 1 },
      "an empty cart_id is the holder's own cart",
    );
    t.notMatch((await getPage(svc, '/cart', { cookie: ada.cookie })).text, d1.key);
  });

  await t.test(
    'adding refuses what is not on the current menu, and answers a retry once',
    async (t) => {
      const unknown = await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: 'no-such-deal' },
        asAda,
      );
      t.equal(unknown.status, 404);
      t.match(unknown.body.detail, /not on the current menu/);
      t.equal(
        (await postForm(svc, '/cart/add', { market: 'x9', offer_key: deals[0].key }, asAda)).status,
        404,
        'unknown market',
      );
      const bad = await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: deals[0].key, qty: 0 },
        asAda,
      );
      t.equal(bad.status, 422);
      const page = await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: 'no-such-deal' },
        { cookie: ada.cookie },
      );
      t.equal(page.status, 404, 'a browser gets the cart page with the message');
      t.match(page.text, /not on the current menu/);

      const key = { 'idempotency-key': 'add-once-1' };
      const first = await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: deals[2].key, qty: 1 },
        { ...asAda, headers: key },
      );
      const again = await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: deals[2].key, qty: 1 },
        { ...asAda, headers: key },
      );
      t.same(again.body, first.body);
      t.equal(again.headers.get('idempotent-replayed'), 'true');
      t.equal(
        (await postForm(svc, '/cart/update', { item_id: first.body.item_id, qty: 1 }, asAda)).body
          .qty,
        1,
        'added once',
      );
      t.equal((await postForm(svc, '/cart/clear', {}, asAda)).body.removed, 1);

      const cross = await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: deals[0].key },
        { ...asAda, headers: { origin: 'https://evil.example' } },
      );
      t.equal(cross.status, 403, 'a cross-site post is refused');
    },
  );

  await t.test(
    'a stale line is marked, skipped by checkout, and refresh moves it to the current menu',
    async (t) => {
      const [d0, d1] = deals;
      // A holder of its own: the ordered line stays in the cart for good.
      const gus = await registerHolder(svc, 'gus@example.com');
      const asGus = { cookie: gus.cookie, json: true };
      const stale = (await postForm(svc, '/cart/add', { market: MARKET, offer_key: d0.key }, asGus))
        .body;
      const fresh = (await postForm(svc, '/cart/add', { market: MARKET, offer_key: d1.key }, asGus))
        .body;
      // As if its session had closed: the line's close time is what makes it stale.
      await db('update cart_item set closes_at = ? where id = ?', [
        svc.services.clock.realNow() - 60,
        stale.item_id,
      ]);
      const page = await getPage(svc, '/cart', { cookie: gus.cookie });
      t.match(
        page.text,
        new RegExp(
          `id="line-${stale.item_id}">(?:(?!</tr>).)*<strong class="stale">stale</strong>`,
          's',
        ),
        'the stale line is marked',
      );
      t.match(page.text, /closed \(\d\d:\d\d:\d\d UTC\)/);

      const refreshed = await postForm(svc, '/cart/refresh', {}, asGus);
      t.same(refreshed.body, { ok: true, remapped: 1, still_stale: 0 });
      t.notMatch(
        (await getPage(svc, '/cart', { cookie: gus.cookie })).text,
        'class="stale"',
        'nothing stale any more',
      );

      await db('update cart_item set closes_at = ? where id = ?', [
        svc.services.clock.realNow() - 60,
        stale.item_id,
      ]);
      const paid = await postForm(svc, '/cart/checkout', { ...CARD, cart_id: '' }, asGus);
      t.equal(paid.status, 200);
      t.match(paid.body, {
        ok: true,
        cart_id: fresh.cart_id,
        skipped_stale: 1,
        bought_outright: false,
      });
      t.equal(
        paid.body.order_ids.length,
        1,
        "the current line is ordered on the holder's Manual desk, the stale one skipped",
      );
      const [order] = await db('select agent_id, qty from orders where id = ?', [
        paid.body.order_ids[0],
      ]);
      t.same(
        order,
        { agent_id: null, qty: 1 },
        'a line the holder picked: an order without an agent',
      );
      t.equal(
        (await postForm(svc, '/cart/clear', {}, asGus)).body.removed,
        1,
        'the stale line stays in the cart, uncharged',
      );
    },
  );

  await t.test(
    'a CSV upload adds the good rows and says why each bad row was skipped',
    async (t) => {
      const [d0, d1, d2] = deals;
      const csv = [
        'market,offer_key,qty,note',
        `${MARKET},${d0.key},2,"first, with a comma"`,
        `nowhere,${d1.key},1,bad market`,
        `${MARKET},no-such-deal,1,unknown deal`,
        `${MARKET},${d1.key},lots,qty not a number`,
        `${MARKET},${d2.key}`,
        `${MARKET},${d1.key},,empty qty is 1`,
      ].join('\n');
      const r = await upload(svc, ada.cookie, csv);
      t.equal(r.status, 200);
      t.match(r.body, { ok: true, added: 2 });
      t.type(r.body.cart_id, 'number');
      t.same(
        r.body.skipped.map((x: any) => x.row),
        [2, 3, 4, 5],
      );
      const [market, deal, qty, column] = r.body.skipped.map((x: any) => x.detail);
      t.match(market, /unknown market "nowhere"/);
      t.match(deal, /"no-such-deal" is not on the current menu/);
      t.match(qty, /qty must be a whole number of at least 1, not "lots"/);
      t.match(column, /missing column qty/);
      const page = await getPage(svc, '/cart', { cookie: ada.cookie });
      t.match(page.text, 'first, with a comma', 'the note is kept');
      t.match(page.text, 'empty qty is 1');
      t.equal((await postForm(svc, '/cart/clear', {}, asAda)).body.removed, 2);

      // A retried upload with its Idempotency-Key is answered again, never added twice.
      const keyed = await upload(svc, ada.cookie, csv, { 'idempotency-key': 'upload-1' });
      const retried = await upload(svc, ada.cookie, csv, { 'idempotency-key': 'upload-1' });
      t.same(retried.body, keyed.body);
      t.equal(retried.headers.get('idempotent-replayed'), 'true');
      const qtys = await svc.orm.em
        .fork()
        .execute('select offer_key, qty from cart_item where cart_id = ? order by id', [
          keyed.body.cart_id,
        ]);
      t.same(
        qtys,
        [
          { offer_key: d0.key, qty: 2 },
          { offer_key: d1.key, qty: 1 },
        ],
        'the rows once, their qty not doubled',
      );
      t.equal((await postForm(svc, '/cart/clear', {}, asAda)).body.removed, 2);

      const noKey = await upload(svc, ada.cookie, 'market,qty\nh2,1\n');
      t.equal(noKey.status, 400);
      t.match(
        noKey.body.detail,
        /must name the columns market,offer_key,qty,note \(missing: offer_key\)/,
      );
      const many = await upload(
        svc,
        ada.cookie,
        [
          'market,offer_key,qty',
          ...Array.from({ length: 501 }, () => `${MARKET},${d0.key},1`),
        ].join('\n'),
      );
      t.equal(many.status, 413);
      t.match(many.body.detail, /at most 500 rows/);
      const big = await upload(
        svc,
        ada.cookie,
        `market,offer_key,qty,note\n${MARKET},${d0.key},1,"${'x'.repeat(300 * 1024)}"\n`,
      );
      t.equal(big.status, 413);
      t.match(big.body.detail, /larger than 256 KiB/);
      const plain = await postForm(svc, '/cart/upload', { file: 'market,offer_key' }, asAda);
      t.equal(plain.status, 415, 'not multipart');
      t.equal(
        (await postForm(svc, '/cart/clear', {}, asAda)).body.removed,
        0,
        'refused uploads added nothing',
      );

      const browser = await svc.get('/cart/upload', {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: ada.cookie },
        body: (() => {
          const f = new FormData();
          f.append('file', new Blob([`market,offer_key\n${MARKET},${d0.key}\n`]), 'a.csv');
          return f;
        })(),
      });
      t.equal(browser.status, 303);
      t.equal(browser.headers.get('location'), '/cart?added=1&skipped=0');
      t.match(
        (await getPage(svc, '/cart?added=1&skipped=0', { cookie: ada.cookie })).text,
        'CSV read: 1 rows added, 0 skipped',
      );
      await postForm(svc, '/cart/clear', {}, asAda);
    },
  );

  await t.test(
    'a multipart body cut off anywhere answers 400; the service lives on and nothing is added',
    async (t) => {
      const head = (name: string, filename?: string) =>
        `--XyZ\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`;
      const header = 'market,offer_key,qty,note\n';
      const cutOff: [string, string | Buffer][] = [
        [
          'a file part without its closing boundary (107 bytes)',
          `${head('file', 'a.csv')}${header}`,
        ],
        ['a file part ending in a partial boundary', `${head('file', 'a.csv')}${header}\r\n--Xy`],
        ['an unterminated part named other than file', `${head('other', 'b.txt')}some bytes`],
        ['an unterminated field without a file name', `${head('note')}a field`],
        [
          'an unterminated file over 256 KiB',
          `${head('file', 'a.csv')}${header}${'x'.repeat(300 * 1024)}`,
        ],
        [
          'a complete part, then a cut-off file',
          `${head('other')}v\r\n${head('file', 'a.csv')}${header}${MARKET},${deals[0].key},1`,
        ],
        ['only the opening boundary', '--XyZ'],
        ['an empty body', ''],
        ['a part with broken headers', '--XyZ\r\nContent-Disposition\r\n\r\nx'],
      ];
      expect400: for (const [what, body] of cutOff) {
        const res = await svc.get('/cart/upload', {
          method: 'POST',
          body,
          headers: {
            cookie: ada.cookie,
            accept: 'application/json',
            'content-type': 'multipart/form-data; boundary=XyZ',
          },
        });
        const answer = await res.json();
        if (res.status === 422) {
          t.match(answer.detail, [{ loc: ['body', 'file'] }], `${what}: 422, no file part`);
          continue expect400;
        }
        t.equal(res.status, 400, `${what}: ${res.status} ${JSON.stringify(answer).slice(0, 160)}`);
        t.match(answer.detail, /not a readable multipart form/);
      }
      const noBoundary = await svc.get('/cart/upload', {
        method: 'POST',
        body: 'x',
        headers: {
          cookie: ada.cookie,
          accept: 'application/json',
          'content-type': 'multipart/form-data',
        },
      });
      t.equal(noBoundary.status, 400, 'no boundary: 400');
      t.equal((await svc.get('/healthz')).status, 200, 'the service still answers');
      t.equal((await postForm(svc, '/cart/clear', {}, asAda)).body.removed, 0, 'nothing was added');
    },
  );

  await t.test(
    'a CSV cell with a NUL character is a skipped row with its reason, never a 500',
    async (t) => {
      const csv = `market,offer_key,qty,note\n${MARKET},${deals[0].key},1,"bad\u0000note"\n${MARKET},${deals[1].key},1,fine\n`;
      const r = await upload(svc, ada.cookie, csv);
      t.equal(r.status, 200);
      t.match(r.body, { ok: true, added: 1 });
      t.same(
        r.body.skipped.map((x: any) => x.row),
        [1],
      );
      t.match(r.body.skipped[0].detail, /note contains NUL characters or unpaired surrogates/);
      t.equal((await postForm(svc, '/cart/clear', {}, asAda)).body.removed, 1);
    },
  );

  await t.test('the CSV template names the columns and a deal of the current menu', async (t) => {
    const r = await getPage(svc, '/cart/template.csv');
    t.equal(r.status, 200);
    t.match(r.headers.get('content-type'), /^text\/csv/);
    const [header, sample] = r.text.trim().split('\n');
    t.equal(header, 'market,offer_key,qty,note');
    const [market, key, qty] = sample.split(',');
    t.equal(market, 'm15');
    t.equal(qty, '1');
    t.equal(
      (await svc.getJson(`/api/v1/markets/m15/deals/${key}`)).status,
      200,
      'the sample deal is on the current menu',
    );
  });

  await t.test(
    "a grant lets an agent write to the holder's cart until it is revoked",
    async (t) => {
      const agent = await registerAgent(svc, { name: 'Granted scout' });
      const me = (await agent.get('/api/v1/agents/me')).body;
      await getPage(svc, new URL(me.carts.mine[0].checkout_url).pathname, { cookie: ada.cookie }); // connects
      const own = (await postForm(svc, '/cart/clear', {}, asAda)).body.cart_id;
      const before = (await agent.get(`/api/v1/carts/${own}`)).body;
      t.match(
        before.permissions,
        { read: true, write: false },
        "a connected agent reads the holder's cart",
      );

      const g = await postForm(
        svc,
        '/cart/grant',
        { agent_id: agent.agentId, cart_id: own, level: 'write', note: 'restock' },
        asAda,
      );
      t.equal(g.status, 200);
      t.match(g.body, { ok: true });
      t.type(g.body.grant_id, 'number');
      t.match((await agent.get(`/api/v1/carts/${own}`)).body.permissions, { write: true });
      const console = await getPage(svc, '/console/agents', { cookie: ada.cookie });
      t.match(console.text, 'restock', 'the agents page lists the grant');
      t.match(console.text, `name="grant_id" value="${g.body.grant_id}"`, 'with its revoke button');

      const bobs = await postForm(
        svc,
        '/cart/grant/revoke',
        { grant_id: g.body.grant_id },
        { cookie: bob.cookie, json: true },
      );
      t.equal(bobs.status, 404, 'another holder cannot revoke it');
      const revoked = await postForm(
        svc,
        '/cart/grant/revoke',
        { grant_id: g.body.grant_id },
        asAda,
      );
      t.same(revoked.body, { ok: true, grant_id: g.body.grant_id, revoked: true });
      t.match((await agent.get(`/api/v1/carts/${own}`)).body.permissions, { write: false });
      t.same(
        (await postForm(svc, '/cart/grant/revoke', { grant_id: g.body.grant_id }, asAda)).body,
        { ok: true, grant_id: g.body.grant_id, revoked: false },
      );

      const browser = await postForm(svc, '/cart/grant', {}, { cookie: ada.cookie });
      t.equal(browser.status, 303, 'the defaults: every agent, every cart, write');
      t.equal(browser.location, '/console/agents');
      const notMine = await postForm(svc, '/cart/grant', { agent_id: 999999 }, asAda);
      t.equal(notMine.status, 404);
    },
  );

  await t.test(
    "an agent's cart link: identity, lines, and paid by a holder registering on the pay form",
    async (t) => {
      const { agent, path, token } = await agentWithLines(svc, deals, 2, {
        name: 'Quartz Scout',
        agent: { model: 'gpt-test-1', vendor: 'Acme Models' },
        operator: { name: 'Acme Research' },
        purpose: 'buy cheap bundles',
      });
      const page = await getPage(svc, path);
      t.equal(page.status, 200);
      for (const s of [
        'Quartz Scout',
        'gpt-test-1',
        'Acme Models',
        'Acme Research',
        'buy cheap bundles',
        `why ${deals[0].key.slice(0, 6)}`,
        'name="auth" value="register"',
      ]) {
        t.match(page.text, s, `shows ${s}`);
      }
      t.match(
        page.text,
        /class="countdown" data-closes="[\d.]+">closes in \d+ s \(\d\d:\d\d:\d\d UTC\)/,
      );
      t.match(page.text, 'This cart trades');

      const noSession = await postForm(svc, `${path}/pay`, CARD, { json: true });
      t.equal(noSession.status, 401, 'auth=session needs a session');
      const shortPassword = await postForm(
        svc,
        `${path}/pay`,
        { ...CARD, auth: 'register', email: 'carol@example.com', password: 'short' },
        { json: true },
      );
      t.equal(shortPassword.status, 422);
      t.same(shortPassword.body.detail[0].loc, ['body', 'password']);

      const cart = (await agent.get('/api/v1/cart')).body;
      const due = Math.round(cart.items.reduce((n: number, l: any) => n + l.total, 0) * 100);
      const r = await postForm(
        svc,
        `${path}/pay`,
        {
          ...CARD,
          auth: 'register',
          email: 'carol@example.com',
          password: 'a long passphrase',
          password2: 'a long passphrase',
          display_name: 'Carol',
        },
        { json: true },
      );
      t.equal(r.status, 200);
      t.match(r.body, {
        ok: true,
        cart_id: cart.id,
        bought_outright: false,
        skipped_stale: 0,
        fee: 15,
        inventory_item_ids: [],
      });
      t.equal(r.body.order_ids.length, 2);
      t.equal(
        Math.round(r.body.charged * 100),
        due + 1500,
        "charged = the lines + the month's fee",
      );
      const carol = sessionCookieOf(r);
      t.match(
        (await getPage(svc, '/console/orders', { cookie: carol })).text,
        deals[0].bundle.title,
        'signed in: the console shows the orders',
      );
      const orders = (await agent.get('/api/v1/orders')).body.orders;
      t.same(
        orders.map((o: any) => o.status),
        ['paid', 'paid'],
      );
      const acct = (await agent.get('/api/v1/account')).body;
      t.same(acct.ledger.map((e: any) => e.kind).sort(), [
        'card_charge',
        'monthly_fee',
        'order_debit',
        'order_debit',
      ]);
      t.equal(
        ledgerSumCents(acct.ledger),
        0,
        "charged onto the agent's account and debited at once",
      );
      t.equal(
        (await agent.get('/api/v1/agents/me')).body.paired,
        true,
        'paying connected the agent',
      );

      const again = await postForm(svc, `${path}/pay`, CARD, { cookie: carol, json: true });
      t.equal(again.status, 409, 'nothing left to pay');
      const paidPage = await getPage(svc, path, { cookie: carol });
      t.match(paidPage.text, 'This cart is paid');
      t.notMatch(paidPage.text, 'name="number"');
      t.equal(
        (await getPage(svc, `/link/${token}`, { cookie: carol })).status,
        200,
        'the older pairing link shows the same cart',
      );
    },
  );

  await t.test(
    "a cart id in a form takes over nothing: another agent's cart answers 404, unpaid and unconnected",
    async (t) => {
      const { agent, path } = await agentWithLines(svc, deals, 1, { name: 'Not yours' });
      const cartId = (await agent.get('/api/v1/cart')).body.id;
      const asBob = { cookie: bob.cookie, json: true };
      for (const [route, fields] of [
        ['/cart/checkout', { ...CARD, cart_id: cartId }],
        ['/cart/clear', { cart_id: cartId }],
      ] as const) {
        const r = await postForm(svc, route, fields, asBob);
        t.equal(
          r.status,
          404,
          `${route} with another agent's cart_id: 404 (${JSON.stringify(r.body).slice(0, 120)})`,
        );
      }
      const me = (await agent.get('/api/v1/agents/me')).body;
      t.equal(me.paired, false, "the agent is still nobody's");
      const cart = (await agent.get('/api/v1/cart')).body;
      t.same(
        cart.items.map((l: any) => l.status),
        ['pending_pairing'],
        'its line is still there, unpaid, waiting for a holder',
      );
      t.same(
        (await agent.get('/api/v1/account')).body.ledger,
        [],
        'nothing charged to its account',
      );
      t.same((await agent.get('/api/v1/orders')).body.orders, [], 'no order');
      // The link is how a cart becomes a holder's: opening it connects the agent to whoever holds it.
      t.equal((await getPage(svc, path, { cookie: bob.cookie })).status, 200);
      t.equal((await agent.get('/api/v1/agents/me')).body.paired, true, 'the link connects');
    },
  );

  await t.test(
    'a declined card registers nobody and charges nothing; a logged-in holder is refused the same',
    async (t) => {
      const { agent, path } = await agentWithLines(svc, deals, 1, { name: 'Declined scout' });
      const declined = { ...CARD, number: '4000 0000 0000 0002' };
      const r = await postForm(
        svc,
        `${path}/pay`,
        { ...declined, auth: 'register', email: 'dave@example.com', password: 'a long passphrase' },
        { json: true },
      );
      t.equal(r.status, 402);
      t.match(r.body.detail, /^card declined/);
      t.equal(
        (await db('select count(*)::int as n from holder where email = ?', ['dave@example.com']))[0]
          .n,
        0,
        'nobody registered',
      );
      const bad = await postForm(
        svc,
        `${path}/pay`,
        { ...CARD, number: '4242 4242 4242 4241' },
        { cookie: bob.cookie, json: true },
      );
      t.equal(bad.status, 400);
      t.match(bad.body.detail, /not valid/);
      const logged = await postForm(svc, `${path}/pay`, declined, { cookie: bob.cookie });
      t.equal(logged.status, 402, 'a browser gets the cart page with the message');
      t.match(logged.text, 'card declined');
      t.match(logged.text, 'Declined scout');
      const acct = (await agent.get('/api/v1/account')).body;
      t.same(acct.ledger, [], 'no ledger entry');
      t.equal(acct.balance, 0);
      t.same(
        (await agent.get('/api/v1/cart')).body.items.map((l: any) => l.status),
        ['in_cart'],
        'the line waits, unpaid (bob connected on the way)',
      );
    },
  );

  await t.test(
    'signing in on the pay form: a registered e-mail logs in with its password; a wrong one is refused',
    async (t) => {
      const { agent, path } = await agentWithLines(svc, deals, 1, { name: 'Second scout' });
      const carol = { auth: 'register', email: 'carol@example.com', password: 'a long passphrase' };
      const wrong = await postForm(
        svc,
        `${path}/pay`,
        { ...CARD, ...carol, password: 'not her passphrase' },
        { json: true },
      );
      t.equal(wrong.status, 409, 'registering a taken e-mail with another password');
      t.match(wrong.body.detail, /already registered/);
      const login = await postForm(
        svc,
        `${path}/pay`,
        { ...CARD, ...carol, auth: 'login', password: 'not her passphrase' },
        { json: true },
      );
      t.equal(login.status, 401);
      t.same((await agent.get('/api/v1/account')).body.ledger, [], 'nothing charged');
      const r = await postForm(svc, `${path}/pay`, { ...CARD, ...carol }, { json: true });
      t.equal(r.status, 200, 'a retried registration (the account exists) logs in and pays');
      t.equal(r.body.fee, 0, "carol paid this month's fee already");
      t.equal(r.body.order_ids.length, 1);
      const cookie = sessionCookieOf(r);
      await postForm(
        svc,
        '/cart/add',
        { market: MARKET, offer_key: deals[4].key },
        { cookie, json: true },
      );
      const link = /href="(\/carts\/[^"]+)">Review and pay/.exec(
        (await getPage(svc, '/cart', { cookie })).text,
      )?.[1];
      t.ok(link, 'the carts page links a cart with open lines to its page');
      const own = await getPage(svc, link!, { cookie });
      t.match(own.text, '<h1>My cart</h1>', "the holder's own cart: no agent to introduce");
      t.notMatch(own.text, 'Who is asking');
      t.match(own.text, 'by you');
    },
  );

  await t.test(
    "an own cart buys outright: no order, the goods in the holder's inventory",
    async (t) => {
      const { agent, path, token } = await agentWithLines(svc, deals, 1, { name: 'Owner scout' });
      const erin = await registerHolder(svc, 'erin@example.com');
      const page = await getPage(svc, path, { cookie: erin.cookie });
      t.match(page.text, `action="/carts/${token}/kind"`, 'an unpaid cart offers the kind switch');
      const k = await postForm(
        svc,
        `${path}/kind`,
        { kind: 'own' },
        { cookie: erin.cookie, json: true },
      );
      t.same(k.body, { ok: true, cart_id: k.body.cart_id, kind: 'own' });
      t.match(
        (await getPage(svc, path, { cookie: erin.cookie })).text,
        'No order, position or trade is opened',
      );
      const r = await postForm(svc, `${path}/pay`, CARD, { cookie: erin.cookie });
      t.equal(r.status, 303);
      t.equal(r.location, path, 'a browser comes back to the cart');
      t.same((await agent.get('/api/v1/orders')).body.orders, [], 'no order');
      t.same((await agent.get('/api/v1/positions')).body.positions, [], 'no position');
      const [goods] = await db(
        `select count(*)::int as n from inventory_item i join account a on a.id = i.account_id where a.holder_id = ? and i.source = 'purchase'`,
        [erin.holderId],
      );
      t.ok(goods.n > 0, "the goods are in the holder's inventory, bought outright");
      const after = await getPage(svc, path, { cookie: erin.cookie });
      t.match(after.text, 'The goods are in your inventory');
      t.notMatch(after.text, `action="/carts/${token}/kind"`, 'a paid cart keeps its kind');
      t.equal(
        (
          await postForm(
            svc,
            `${path}/kind`,
            { kind: 'trade' },
            { cookie: erin.cookie, json: true },
          )
        ).status,
        400,
      );
    },
  );
});
