// The holder's money on a real database (CONTRACT.md "The holder's money"): over random
// sequences of top-ups, payouts, coin packs and cart checkouts every balance equals the sum of its
// ledger and the model's balance; a payout is paid exactly once, across a restart and with two
// services on one database; the participation fee is charged once per month across checkout
// kinds, the month being the service clock's. The clock is the test's.
import fc from 'fast-check';
import t from 'tap';
import { accountRef } from '../../actors/account/messages.js';
import { agentRef } from '../../actors/agent/messages.js';
import { cartRef, type Caller } from '../../actors/cart/messages.js';
import type { Payment } from '../../actors/money/messages.js';
import { holderRef } from '../../actors/holder/messages.js';
import { sharedDatabaseConfig, startTestService, type TestService } from '../helpers/service.js';
import { registerAgent, send, type TestAgent } from '../helpers/agents.js';
import { registerHolder, type TestHolder } from '../helpers/holders.js';
import { fileTimeout } from '../helpers/file-timeout.js';

fileTimeout(170); // 5 services on one database

const VISA = { brand: 'visa', last4: '4242', expMonth: 12, expYear: 2039 };
/** 23:50 UTC on 28 February 2027: h10 session 50107 (22:00 to 08:00) runs across the month's end. */
const FEB_END = Date.UTC(2027, 2, 1) / 1000 - 600;

type Money = {
  svc: TestService;
  q: (sql: string, p?: unknown[]) => Promise<any[]>;
  holder: TestHolder;
  hid: number;
  desk: number;
  agent: TestAgent;
};

async function setUp(svc: TestService): Promise<Money> {
  const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p) as Promise<any[]>;
  const holder = await registerHolder(svc);
  const [{ id: hid }] = await q('select id::float8 as id from holder where email = ?', [
    holder.email,
  ]);
  const [{ id: desk }] = await q(
    `select id::float8 as id from account where holder_id = ? and kind = 'manual'`,
    [hid],
  );
  const agent = await registerAgent(svc);
  const link = (
    await send(svc, 'GET', '/api/v1/cart', undefined, { authorization: `Bearer ${agent.key}` })
  ).body.checkout_url;
  await svc.get(new URL(link).pathname, { headers: { cookie: holder.cookie } });
  return { svc, q, holder, hid, desk, agent };
}

const at = (svc: TestService) => svc.services.clock.realNow();
const rt = (m: Money) => m.svc.services.runtime;
const refusal = async (p: Promise<unknown>) =>
  p.then(
    () => 0,
    (e) => (e as { status?: number }).status ?? -1,
  );

async function balances(m: Money): Promise<Map<number, { balance: number; sum: number }>> {
  const rows = await m.q(
    `select a.id::float8 as id, a.balance_cents::float8 as balance, (select coalesce(sum(amount_cents), 0)::float8 from ledger l where l.account_id = a.id) as sum
       from account a where a.holder_id = ?`,
    [m.hid],
  );
  return new Map(rows.map((r) => [r.id, { balance: r.balance, sum: r.sum }]));
}
async function coins(m: Money): Promise<{ balance: number; sum: number }> {
  const [r] = await m.q(
    `select gc_balance_hundredths::float8 as balance, (select coalesce(sum(amount_hundredths), 0)::float8 from gc_ledger where holder_id = h.id) as sum from holder h where id = ?`,
    [m.hid],
  );
  return r;
}

/** One agent line of an h10 deal in the agent's default cart (or `cartId`); the cart id. */
async function proposeLine(m: Money, i: number, cartId?: number): Promise<number> {
  const deals = (await send(m.svc, 'GET', '/api/v1/markets/h10/deals?limit=50')).body.deals;
  const path = cartId ? `/api/v1/carts/${cartId}/items` : '/api/v1/cart/items';
  const r = await send(
    m.svc,
    'POST',
    path,
    { market: 'h10', offer_key: deals[i % deals.length].key, qty: 1 },
    { authorization: `Bearer ${m.agent.key}` },
  );
  if (r.status !== 201) throw new Error(`propose: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.cart_id;
}

t.test(
  "over random sequences of top-ups, payouts, coin packs and checkouts, every balance is the sum of its ledger and the model's",
  async (t) => {
    const nowMs = (FEB_END - 3 * 86_400) * 1000;
    const svc = await startTestService(t, {}, { realMs: () => nowMs });
    type Op =
      | { op: 'topup'; desk: boolean; cents: number }
      | { op: 'payout'; desk: boolean; cents: number }
      | { op: 'coins'; pack: number }
      | { op: 'checkout'; deal: number; balance: boolean };
    const opArb: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        op: fc.constant('topup' as const),
        desk: fc.boolean(),
        cents: fc.integer({ min: 1, max: 500_000 }),
      }),
      fc.record({
        op: fc.constant('payout' as const),
        desk: fc.boolean(),
        cents: fc.integer({ min: 1, max: 300_000 }),
      }),
      fc.record({ op: fc.constant('coins' as const), pack: fc.constantFrom(5, 10, 25, 50, 100) }),
      fc.record({ op: fc.constant('checkout' as const), deal: fc.nat(40), balance: fc.boolean() }),
    );
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 10 }), async (ops) => {
        const m = await setUp(svc);
        runs++;
        const model = new Map<number, number>([
          [m.desk, 0],
          [m.agent.accountId, 0],
        ]);
        let gc = 500;
        let feeDue = true;
        for (const o of ops) {
          if (o.op === 'topup') {
            const acc = o.desk ? m.desk : m.agent.accountId;
            await rt(m).ask(accountRef(acc), {
              kind: 'topup',
              holderId: m.hid,
              amountCents: o.cents,
              payment: { method: 'new_card', card: VISA, save: false },
              at: at(svc),
            });
            model.set(acc, model.get(acc)! + o.cents);
          } else if (o.op === 'payout') {
            const acc = o.desk ? m.desk : m.agent.accountId;
            const ok = o.cents >= 1000 && o.cents <= model.get(acc)!;
            const status = await refusal(
              rt(m).ask(accountRef(acc), {
                kind: 'payout',
                holderId: m.hid,
                amountCents: o.cents,
                payAt: at(svc) + 3 * 86_400,
              }),
            );
            if (status !== (ok ? 0 : 400))
              throw new Error(`payout of ${o.cents} from ${model.get(acc)}: ${status}`);
            if (ok) model.set(acc, model.get(acc)! - o.cents);
          } else if (o.op === 'coins') {
            const r = await rt(m).ask(holderRef(m.holder.email), {
              kind: 'buyCoins',
              holderId: m.hid,
              pack: o.pack,
              payment: { method: 'new_card', card: VISA, save: false },
              at: at(svc),
            });
            gc += o.pack * 100;
            if (r.fee_cents !== (feeDue ? 1500 : 0) || r.gc_balance_hundredths !== gc)
              throw new Error(`coins: ${JSON.stringify(r)}`);
            feeDue = false;
          } else {
            const cart = await proposeLine(m, o.deal);
            const before = model.get(m.agent.accountId)!;
            const payment: Payment = o.balance
              ? { method: 'balance' }
              : { method: 'new_card', card: VISA, save: false };
            const r = await rt(m)
              .ask(cartRef(cart), {
                kind: 'checkout',
                caller: { kind: 'holder', holderId: m.hid },
                payment,
                at: at(svc),
                baseUrl: svc.config.baseUrl,
              })
              .catch((e) => e);
            const cost = Math.round(r.total * 100 || 0) + (feeDue ? 1500 : 0);
            if (r.status === 400) {
              if (!o.balance) throw new Error(`card checkout refused: ${r.detail}`);
              await rt(m).ask(cartRef(cart), {
                kind: 'clear',
                caller: { kind: 'holder', holderId: m.hid },
                at: at(svc),
              });
              continue;
            }
            if (r instanceof Error) throw r;
            if (Math.round(r.fee * 100) !== (feeDue ? 1500 : 0))
              throw new Error(`checkout fee ${r.fee}, due ${feeDue}`);
            if (o.balance) {
              if (before < cost) throw new Error(`paid ${cost} from a balance of ${before}`);
              model.set(m.agent.accountId, before - cost);
            }
            feeDue = false;
          }
          for (const [id, b] of await balances(m)) {
            if (b.balance !== b.sum)
              throw new Error(
                `account ${id}: balance ${b.balance} but ledger ${b.sum} after ${JSON.stringify(o)}`,
              );
            if (model.has(id) && b.balance !== model.get(id))
              throw new Error(
                `account ${id}: balance ${b.balance}, model ${model.get(id)} after ${JSON.stringify(o)}`,
              );
          }
          const c = await coins(m);
          if (c.balance !== c.sum || c.balance !== gc)
            throw new Error(`coins ${c.balance}, ledger ${c.sum}, model ${gc}`);
        }
      }),
      { numRuns: 12 },
    );
    t.equal(runs, 12, 'every sequence ran');
  },
);

t.test(
  'a payout is paid exactly once: after a restart, and with two services on one database',
  async (t) => {
    let nowMs = (FEB_END - 10 * 86_400) * 1000;
    const config = await sharedDatabaseConfig(t);
    const first = await startTestService(t, {}, { realMs: () => nowMs }, config);
    const m = await setUp(first);
    await rt(m).ask(accountRef(m.desk), {
      kind: 'topup',
      holderId: m.hid,
      amountCents: 100_000,
      payment: { method: 'new_card', card: VISA, save: false },
      at: at(first),
    });
    // An hour ahead: the restarted services catch up four m15 closes, not three days of them.
    const payAt = at(first) + 3600;
    const ids: number[] = [];
    for (const cents of [1000, 2000, 3000])
      ids.push(
        (
          await rt(m).ask(accountRef(m.desk), {
            kind: 'payout',
            holderId: m.hid,
            amountCents: cents,
            payAt,
          })
        ).payout_id,
      );
    const [p] = await m.q(
      'select amount_cents::float8 as a, commission_cents::float8 as c, net_cents::float8 as n, status from payout where id = ?',
      [ids[1]],
    );
    t.same(
      p,
      { a: 2000, c: 120, n: 1880, status: 'scheduled' },
      '6 % commission, the net paid out',
    );
    t.same(await first.services.supervisor.payDue(), [], 'not due before its time');
    await first.stop();

    nowMs = (payAt + 1) * 1000;
    const second = await startTestService(t, {}, { realMs: () => nowMs }, config);
    const third = await startTestService(t, {}, { realMs: () => nowMs }, config);
    await Promise.all([second, third, second, third].map((s) => s.services.supervisor.payDue()));
    // Every sweep (the explicit ones and the supervisors' own timers) logs what it paid.
    const paidBy = (s: TestService) =>
      s.logs.flatMap((l) => (Array.isArray(l.payouts) ? (l.payouts as number[]) : []));
    t.same(
      [...paidBy(second), ...paidBy(third)].sort((a, b) => a - b),
      ids,
      'each payout paid by exactly one sweep of the two services, after the restart',
    );
    const q = (sql: string, p: unknown[] = []) =>
      second.orm.em.fork().execute(sql, p) as Promise<any[]>;
    const rows = await q(
      'select status, paid_at from payout where id = any(?::bigint[]) order by id',
      [`{${ids}}`],
    );
    t.same(
      rows.map((r) => r.status),
      ['paid', 'paid', 'paid'],
    );
    t.same(await second.services.supervisor.payDue(), [], 'a later sweep pays nothing again');
    const again = await q('select paid_at from payout where id = any(?::bigint[]) order by id', [
      `{${ids}}`,
    ]);
    t.same(
      again,
      rows.map((r) => ({ paid_at: r.paid_at })),
      'paid_at unchanged',
    );
    const ledger = await q(
      `select kind, amount_cents::float8 as c from ledger where account_id = ? order by id`,
      [m.desk],
    );
    t.same(
      ledger.map((l) => l.kind),
      ['card_charge', 'payout', 'payout', 'payout'],
      'the payouts left the balance when scheduled, once',
    );
  },
);

t.test(
  "the participation fee is charged once per month across checkout kinds, the month being the service clock's",
  async (t) => {
    let nowMs = FEB_END * 1000;
    const svc = await startTestService(t, {}, { realMs: () => nowMs });
    const m = await setUp(svc);
    const holderCaller: Caller = { kind: 'holder', holderId: m.hid };
    const checkoutCart = async (cart: number) =>
      rt(m).ask(cartRef(cart), {
        kind: 'checkout',
        caller: holderCaller,
        payment: { method: 'new_card', card: VISA, save: false },
        at: at(svc),
        baseUrl: svc.config.baseUrl,
      });
    const pack = () =>
      rt(m).ask(holderRef(m.holder.email), {
        kind: 'buyCoins',
        holderId: m.hid,
        pack: 5,
        payment: { method: 'new_card', card: VISA, save: false },
        at: at(svc),
      });

    t.equal(
      (await pack()).fee_cents,
      1500,
      'February: the first real-money checkout carries the fee',
    );
    t.equal(
      (await checkoutCart(await proposeLine(m, 0))).fee,
      0,
      'a trade cart in February: no fee',
    );
    const top = await rt(m).ask(accountRef(m.desk), {
      kind: 'topup',
      holderId: m.hid,
      amountCents: 5000,
      payment: { method: 'new_card', card: VISA, save: false },
      at: at(svc),
    });
    t.equal(top.balance_cents, 5000, 'a top-up is never charged the fee');
    const onDesk = await refusal(
      rt(m).ask(agentRef('DeskAgentKeyId000001'), {
        kind: 'registerForHolder',
        keyHash: 'x',
        profile: { name: 'a', recall_phrase: 'abc' },
        holderId: m.hid,
        accountId: m.desk,
      }),
    );
    t.equal(onDesk, 400, 'a holder-made key never trades the Manual desk');

    nowMs = (FEB_END + 1200) * 1000; // 00:10 UTC, 1 March 2027: the same h10 session, a new month
    const fresh = await send(
      svc,
      'POST',
      '/api/v1/carts',
      { name: 'to keep' },
      { authorization: `Bearer ${m.agent.key}` },
    );
    const own = await proposeLine(m, 1, fresh.body.id);
    await rt(m).ask(cartRef(own), { kind: 'setKind', holderId: m.hid, cartKind: 'own' });
    t.equal((await checkoutCart(own)).fee, 15, "March: an own cart carries the new month's fee");
    t.equal((await pack()).fee_cents, 0, 'and the next pack does not');
    const months = await m.q('select month from monthly_fee where holder_id = ? order by month', [
      m.hid,
    ]);
    t.same(
      months.map((r) => r.month),
      ['2027-02', '2027-03'],
      'one fee row per month of the service clock',
    );
    const account = (
      await send(svc, 'GET', '/api/v1/account', undefined, {
        authorization: `Bearer ${m.agent.key}`,
      })
    ).body;
    t.same(
      [account.monthly_fee.month, account.monthly_fee.due],
      ['2027-03', false],
      "GET /account: this month's fee is charged",
    );
  },
);
