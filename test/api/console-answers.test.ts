// The console answers every form, over HTTP on the real service: a browser's top-up,
// Gold Coin pack, payout, limits, funding switch and card removal are each answered by the next
// console page with what happened and the amounts (once: the notice travels in a short-lived cookie,
// never in the address, and a cookie naming anything else shows nothing); a refused form names its
// field and keeps what was typed; the confirmations say whether the card was stored; each paid order
// links its receipt, readable and verified. JSON answers stay as they were. The clock is the test's
// (CLOCKED_START_MS): pay_at, fee months and the receipt's instant are fixed.
import t from 'tap';
import { HtmlValidate } from 'html-validate';
import { startClockedService } from '../helpers/clocked.js';
import { registerAgent, send } from '../helpers/agents.js';
import { getPage, postForm, registerHolder, type WebAnswer } from '../helpers/web.js';

const CARD = {
  method: 'new_card',
  number: '4242 4242 4242 4242',
  exp: '12/39',
  cvc: '123',
  holder: 'Ada L',
};
const DAY = 86_400;

const c = await startClockedService(t);
const svc = c.svc;
const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
const deskOf = async (holderId: number) =>
  (
    await q(`select id::float8 as id from account where holder_id = ? and kind = 'manual'`, [
      holderId,
    ])
  )[0].id as number;
const balanceOf = async (accountId: number) =>
  (await q('select balance_cents::float8 as b from account where id = ?', [accountId]))[0]
    .b as number;

/** The text of a page's element (first match of `re`'s group), entities decoded as a browser shows them. */
const unescape = (s: string) =>
  s
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x3D;/g, '=')
    .replace(/&amp;/g, '&');
const noticeIn = (html: string) => {
  const m = /<p class="success" role="status">([^<]*)<\/p>/.exec(html);
  return m ? unescape(m[1]) : null;
};
const alertIn = (html: string) => {
  const m = /<p class="error" id="form-error" role="alert">([^<]*)<\/p>/.exec(html);
  return m ? unescape(m[1]) : null;
};
/** The notice cookie a 303 sets, ready to send back. */
const noticeCookieOf = (a: WebAnswer) =>
  /(console_notice=[^;]*)/.exec(a.setCookie ?? '')?.[1] ?? null;
/** The form of `action` on a page. */
const formOf = (html: string, action: string) =>
  new RegExp(`<form[^>]*action="${action}"[^]*?</form>`).exec(html)?.[0] ?? '';
const utcMinute = (unix: number) =>
  `${new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * Posts `fields` to `path` as a browser, follows the 303 with the cookie it set, and returns the page
 * and what it said; the same page again says nothing (the notice is shown once).
 */
async function answered(
  t: Tap.Test,
  cookie: string,
  path: string,
  fields: Record<string, string | number>,
  next: string,
) {
  const post = await postForm(svc, path, fields, { cookie });
  t.equal(post.status, 303, `${path}: a browser is sent on`);
  t.equal(post.location, next, 'to the console page, with nothing in the address');
  const notice = noticeCookieOf(post);
  t.ok(notice, 'the answer carries the notice');
  t.match(post.setCookie, /HttpOnly/i, "out of scripts' reach");
  t.match(post.setCookie, /Path=\/console/, 'for the console only');
  const page = await getPage(svc, next, { cookie: `${cookie}; ${notice}` });
  t.equal(page.status, 200);
  t.match(page.setCookie, /console_notice=;.*Max-Age=0/, 'the page clears it once shown');
  const again = await getPage(svc, next, { cookie });
  t.equal(noticeIn(again.text), null, 'and it is not said twice');
  return { page, notice: noticeIn(page.text) };
}

t.test('each console form answers with what happened and the amounts', async (t) => {
  const ada = await registerHolder(svc, 'ada@example.com');
  const desk = await deskOf(ada.holderId);
  const asAda = { cookie: ada.cookie, json: true };

  await t.test('a top-up', async (t) => {
    const { notice } = await answered(
      t,
      ada.cookie,
      '/console/topup',
      { account_id: desk, amount: '50', ...CARD, save_card: 'on' },
      '/console/money',
    );
    t.equal(
      notice,
      `Added 50.00 USD to Manual desk (account ${desk}) by card. Its balance is now 50.00 USD.`,
    );
    t.equal(await balanceOf(desk), 5000);
  });

  await t.test("a Gold Coin pack, with the month's participation fee it carried", async (t) => {
    const { notice } = await answered(
      t,
      ada.cookie,
      '/console/coins',
      { pack: 10, ...CARD },
      '/console/money',
    );
    t.equal(
      notice,
      "Bought 10 Gold Coins for 50.00 USD by card, plus this month's participation fee of 15.00 USD: 65.00 USD charged. Your Gold Coin balance is 15.00 GC.",
    );
    const second = await answered(
      t,
      ada.cookie,
      '/console/coins',
      { pack: 5, ...CARD },
      '/console/money',
    );
    t.equal(
      second.notice,
      'Bought 5 Gold Coins for 25.00 USD by card: 25.00 USD charged. Your Gold Coin balance is 20.00 GC.',
      'no fee the second time',
    );
  });

  await t.test('a payout: its commission, the net amount and when it is paid', async (t) => {
    const { notice } = await answered(
      t,
      ada.cookie,
      '/console/payout',
      { account_id: desk, amount: '20' },
      '/console/money',
    );
    const [row] = await q('select id::float8 as id from payout where account_id = ?', [desk]);
    const payAt = c.now() / 1000 + 3 * DAY;
    t.equal(
      notice,
      `Payout ${row.id} requested from Manual desk (account ${desk}): 20.00 USD left the balance now. ` +
        `You will be paid 18.80 USD (20.00 USD minus the 6 % commission of 1.20 USD) on ${utcMinute(payAt)}.`,
    );
    t.equal(utcMinute(payAt), '2026-11-29 12:00 UTC', 'three days after the fixed start');
  });

  await t.test('a card removed', async (t) => {
    const [card] = await q('select id::float8 as id from card where holder_id = ?', [ada.holderId]);
    const { notice } = await answered(
      t,
      ada.cookie,
      '/console/cards/remove',
      { card_id: card.id },
      '/console/money',
    );
    t.equal(notice, 'Removed your stored visa •••• 4242: it is no longer offered when you pay.');
  });

  await t.test('limits saved, and the funding switch', async (t) => {
    const made = await postForm(svc, '/console/agents', { name: 'Limit Wren' }, asAda);
    t.equal(made.status, 200);
    const path = `/console/agents/${made.body.agent_id}/limits`;
    const { notice } = await answered(
      t,
      ada.cookie,
      path,
      { max_order: '25', max_day: '100.5', markets: 'm15, h2' },
      '/console/agents',
    );
    t.equal(
      notice,
      'Limits saved for Limit Wren: at most 25.00 USD per order; at most 100.50 USD per UTC day; markets m15, h2.',
    );
    const none = await answered(
      t,
      ada.cookie,
      path,
      { max_order: '', max_day: '', markets: '' },
      '/console/agents',
    );
    t.equal(
      none.notice,
      'Limits saved for Limit Wren: no limit per order; no limit per day; every market.',
    );
    const off = await answered(
      t,
      ada.cookie,
      `/console/agents/${made.body.agent_id}/funding`,
      { enabled: 'off' },
      '/console/agents',
    );
    t.equal(off.notice, 'Autonomous funding is now off for Limit Wren.');
  });

  await t.test('JSON answers are unchanged, and carry no notice', async (t) => {
    const r = await postForm(
      svc,
      '/console/topup',
      { account_id: desk, amount: '5', ...CARD },
      asAda,
    );
    t.same(r.body, { ok: true, account_id: desk, amount: 5, balance: 35 });
    t.equal(noticeCookieOf(r), null);
  });

  await t.test(
    'a retried top-up (same Idempotency-Key) moves money once and answers the same',
    async (t) => {
      const headers = { 'idempotency-key': 'console-answers-topup' };
      const first = await postForm(
        svc,
        '/console/topup',
        { account_id: desk, amount: '7', ...CARD },
        { cookie: ada.cookie, headers },
      );
      const again = await postForm(
        svc,
        '/console/topup',
        { account_id: desk, amount: '7', ...CARD },
        { cookie: ada.cookie, headers },
      );
      t.equal(again.headers.get('idempotent-replayed'), 'true');
      t.equal(noticeCookieOf(again), noticeCookieOf(first), 'the same notice');
      t.equal(await balanceOf(desk), 4200, 'charged once');
    },
  );

  await t.test("nothing but the service's own notice is shown", async (t) => {
    const bob = await registerHolder(svc, 'bob@example.com');
    const bobsDesk = await deskOf(bob.holderId);
    const shown = async (value: string) =>
      noticeIn(
        (await getPage(svc, '/console/money', { cookie: `${ada.cookie}; console_notice=${value}` }))
          .text,
      );
    t.equal(await shown('hello%20world'), null, 'no free text');
    t.equal(await shown('topup.1.2'), null, 'not a known code with its numbers');
    t.equal(await shown('topup.1.2.x'), null, 'numbers only');
    t.equal(await shown('evil.1'), null, 'no unknown code');
    t.equal(await shown(`topup.${bobsDesk}.100000.100000`), null, "nobody else's account is named");
    t.equal(
      await shown(`topup.${desk}.100.4800`),
      `Added 1.00 USD to Manual desk (account ${desk}) by card. Its balance is now 48.00 USD.`,
      "the holder's own cookie reads back as the server words it",
    );
    const crafted = await getPage(svc, '/console/money?notice=Added%201000000%20USD', {
      cookie: ada.cookie,
    });
    t.equal(noticeIn(crafted.text), null, 'an address says nothing');
  });
});

t.test('a refused form names its field and keeps what was typed', async (t) => {
  const cy = await registerHolder(svc, 'cy@example.com');
  const desk = await deskOf(cy.holderId);
  const made = await postForm(
    svc,
    '/console/agents',
    { name: 'Field Finch' },
    { cookie: cy.cookie, json: true },
  );
  const path = `/console/agents/${made.body.agent_id}/limits`;
  t.equal(
    (
      await postForm(
        svc,
        path,
        { max_order: '25', max_day: '100', markets: '' },
        { cookie: cy.cookie, json: true },
      )
    ).status,
    200,
    'limits stored first',
  );

  await t.test('a bad daily limit', async (t) => {
    const r = await postForm(
      svc,
      path,
      { max_order: '30', max_day: '12,50', markets: 'm15' },
      { cookie: cy.cookie },
    );
    t.equal(r.status, 422);
    t.equal(
      alertIn(r.text),
      'Most per day (USD): must be an amount in USD from 0 to 1000000 with at most 2 decimals, or empty for no limit',
    );
    const form = formOf(r.text, path);
    t.match(
      form,
      /name="max_day" inputmode="decimal" value="12,50" placeholder="no limit" aria-invalid="true" aria-describedby="form-error"/,
      'the value typed, marked',
    );
    t.match(
      form,
      /name="max_order" inputmode="decimal" value="30" placeholder="no limit">/,
      'the other fields as typed too, not the stored 25.00',
    );
    t.match(form, /name="markets" value="m15" checked/);
    const json = await postForm(svc, path, { max_day: '12,50' }, { cookie: cy.cookie, json: true });
    t.equal(json.status, 422);
    t.match(json.body.detail, [{ loc: ['body', 'max_day'] }], 'JSON keeps the standard 422');
  });

  await t.test('an unknown market', async (t) => {
    const r = await postForm(
      svc,
      path,
      { max_order: '', max_day: '', markets: 'm15, zz' },
      { cookie: cy.cookie },
    );
    t.equal(r.status, 422);
    t.match(alertIn(r.text), /^Markets: choose among the market ids m15, m45, h2, h10/);
    const form = formOf(r.text, path);
    t.match(form, /<fieldset class="markets" aria-invalid="true"/, 'the list marked at fault');
    t.match(form, /name="markets" value="m15" checked/, 'the known market as ticked');
    t.notMatch(form, /value="zz"/, 'the unknown one offered nowhere');
    const json = await postForm(svc, path, { markets: 'zz' }, { cookie: cy.cookie, json: true });
    t.match(json.body.detail, [{ loc: ['body', 'markets'], msg: /^unknown market\(s\) zz/ }]);
  });

  await t.test('a top-up amount, and a payout above the balance', async (t) => {
    const r = await postForm(
      svc,
      '/console/topup',
      { account_id: desk, amount: '1.005', ...CARD },
      { cookie: cy.cookie },
    );
    t.equal(r.status, 422);
    t.equal(
      alertIn(r.text),
      'Amount (USD): must be an amount in USD above 0 and at most 1000000, with at most 2 decimals',
    );
    const topup = formOf(r.text, '/console/topup');
    t.match(topup, /name="amount" inputmode="decimal" required value="1.005" aria-invalid="true"/);
    t.match(
      topup,
      new RegExp(`<option value="${desk}" selected>`),
      'the account chosen stays chosen',
    );
    t.match(
      topup,
      /<input name="number" inputmode="numeric" autocomplete="cc-number" data-card-number placeholder="[^"]*">/,
      'the card number is never written back',
    );
    t.match(
      formOf(r.text, '/console/payout'),
      /name="amount" inputmode="decimal" required value=""/,
      'the other form is untouched',
    );

    const payout = await postForm(
      svc,
      '/console/payout',
      { account_id: desk, amount: '999' },
      { cookie: cy.cookie },
    );
    t.equal(payout.status, 400);
    t.match(alertIn(payout.text), /more than the balance/);
    t.match(
      formOf(payout.text, '/console/payout'),
      /name="amount" inputmode="decimal" required value="999"/,
    );
  });
});

t.test(
  'confirmations say whether the card was stored; paid orders link their receipt',
  async (t) => {
    const dee = await registerHolder(svc, 'dee@example.com');
    const agent = await registerAgent(svc, { name: 'Receipt Robin' });
    const menu = (await send(svc, 'GET', '/api/v1/markets/m15/deals')).body;
    const place = async (i: number) =>
      (await agent.post('/api/v1/orders', { market: 'm15', offer_key: menu.deals[i].key, qty: 1 }))
        .body;
    const tokenOf = (o: any) => new URL(o.purchase_url).pathname.split('/').pop();
    const pay = async (o: any, fields: Record<string, string | number>) => {
      const r = await postForm(svc, `/checkout/${tokenOf(o)}/pay`, fields, { cookie: dee.cookie });
      t.equal(r.status, 303, JSON.stringify(r.text).slice(0, 200));
      return (await getPage(svc, r.location!, { cookie: dee.cookie })).text;
    };
    const stored = (html: string) =>
      unescape(
        /<dt>Card stored<\/dt><dd>(.*?)<\/dd>/.exec(html)?.[1]?.replace(/<[^>]+>/g, '') ?? '',
      );

    const first = await place(0);
    const saved = await pay(first, { ...CARD, save_card: 'on' });
    t.equal(
      stored(saved),
      'Yes: visa •••• 4242, 12/39 is stored for your next payments (brand, last 4 digits and expiry only; remove it any time).',
    );
    const second = await place(1);
    const once = await pay(second, { ...CARD, number: '5555 5555 5555 4444' });
    t.equal(stored(once), 'No: the card paid this once and is not stored.');
    const [card] = await q('select id::float8 as id from card where holder_id = ?', [dee.holderId]);
    const third = await place(2);
    t.equal(
      stored(await pay(third, { method: 'card', card_id: card.id })),
      'Yes, already: you paid with your stored card visa •••• 4242.',
    );
    const crafted = await getPage(svc, `/checkout/${tokenOf(second)}/done?card=4444&saved=1`, {
      cookie: dee.cookie,
    });
    t.equal(
      stored(crafted.text),
      'No: the card paid this once and is not stored.',
      'the address cannot call a card stored',
    );
    t.match(crafted.text, /You approved [^<]*'s order/, 'the holder paid it: they approved it');

    const served = (await agent.get(`/api/v1/orders/${first.id}`)).body;
    t.type(served.receipt, 'string', 'the paid order carries a receipt');
    t.match(
      saved,
      `<a href="/console/orders/${first.id}/receipt">Read the receipt of order ${first.id}</a>`,
      'the confirmation links it',
    );

    await t.test("the orders page links each paid order's receipt", async (t) => {
      const orders = await getPage(svc, '/console/orders', { cookie: dee.cookie });
      for (const o of [first, second, third])
        t.match(
          orders.text,
          `<a href="/console/orders/${o.id}/receipt" aria-label="Receipt of order ${o.id}">Receipt</a>`,
        );
    });

    await t.test('the receipt, readable', async (t) => {
      const page = await getPage(svc, `/console/orders/${first.id}/receipt`, {
        cookie: dee.cookie,
      });
      t.equal(page.status, 200);
      const text = unescape(page.text);
      t.match(text, `<h1>Receipt of order ${first.id}</h1>`);
      t.match(
        text,
        /Signature valid: checked just now against the service's published key <code>[^<]+<\/code> \(EdDSA\)/,
      );
      t.match(text, `Order ${first.id}: 1 × ${menu.deals[0].bundle.title}`, 'what was bought');
      t.match(
        text,
        `${(served.total_amount + 15).toFixed(2)} USD charged, with the month's participation fee of 15.00 USD`,
        'how much',
      );
      t.match(
        text,
        `datetime="${new Date(c.now() - (c.now() % 1000)).toISOString().replace('.000Z', 'Z')}"`,
        "when: the service clock's instant",
      );
      t.match(text, 'by you: you paid it yourself', 'approved how');
      t.match(
        text,
        `<code class="jws" id="receipt-jws" tabindex="0">${served.receipt}</code>`,
        'the JWS itself',
      );
      t.match(text, `<a href="${svc.config.baseUrl}/.well-known/jwks.json">`, 'where its keys are');
      t.match(
        text,
        /<th scope="row"><code>approval<\/code><\/th><td>holder<br>/,
        'every signed field',
      );
      const report = await new HtmlValidate({
        extends: ['html-validate:standard', 'html-validate:document'],
        rules: { 'require-sri': ['error', { target: 'crossorigin' }] },
      }).validateString(page.text, 'receipt');
      t.same(
        report.results.flatMap((r) => r.messages.map((m) => `${m.ruleId}: ${m.message}`)),
        [],
        'valid HTML',
      );
    });

    await t.test("the console's cart checkout says what it paid, on the orders page", async (t) => {
      const line = await agent.post('/api/v1/cart/items', {
        market: 'm15',
        offer_key: menu.deals[4].key,
        qty: 1,
        note: 'a reason',
      });
      t.equal(line.status, 201);
      t.equal(
        (await getPage(svc, new URL(line.body.checkout_url).pathname, { cookie: dee.cookie }))
          .status,
        200,
        'the holder opens the cart link',
      );
      const cart = (await agent.get('/api/v1/cart')).body;
      const { notice } = await answered(
        t,
        dee.cookie,
        '/cart/checkout',
        { ...CARD, cart_id: cart.id },
        '/console/orders',
      );
      const paid = (await agent.get('/api/v1/orders')).body.orders.find(
        (o: any) => o.offer_key === menu.deals[4].key,
      );
      t.equal(paid.status, 'paid');
      t.equal(
        notice,
        `Paid 1 order of the cart: ${paid.total_amount.toFixed(2)} USD charged. Each fills when its session closes; the receipt is linked beside it below.`,
      );
    });

    await t.test("only the holder's paid orders have one", async (t) => {
      const eve = await registerHolder(svc, 'eve@example.com');
      t.equal(
        (await getPage(svc, `/console/orders/${first.id}/receipt`, { cookie: eve.cookie })).status,
        404,
        "another holder's order is not found",
      );
      const unpaid = await place(3);
      const none = await getPage(svc, `/console/orders/${unpaid.id}/receipt`, {
        cookie: dee.cookie,
      });
      t.equal(none.status, 404);
      t.match(none.text, 'has no receipt');
      t.equal(
        (await getPage(svc, '/console/orders/999999/receipt', { cookie: dee.cookie })).status,
        404,
      );
    });
  },
);
