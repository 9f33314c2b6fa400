// The README's quick start, run as written on the embedded default: its shell blocks go
// through the docs' curl runner against a service started without DATABASE_URL and with the README's
// SVC_TIME_SCALE=300; the holder's steps (register, pay the purchase link, pay the cart) are the
// same forms a browser posts. The clock is driven through the closes until both positions settle.
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { MARKETS } from '../../src/engine/index.js';
import { embeddedTestConfig, startTestService } from '../helpers/service.js';
import { registerHolder } from '../helpers/holders.js';
import { commandsOf, run, type Ran } from '../helpers/shell-curl.js';
import { T0 } from '../helpers/clock-rig.js';
import { ROOT } from '../helpers/root.js';

const README_BASE = 'http://127.0.0.1:8080';
const MARKET = 'h2';
const INTERVAL = MARKETS[MARKET].interval_seconds;

/** The ```sh blocks of the README's "Quick start" section, in order. */
function quickStartBlocks(): string[] {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = /^## Quick start[^\n]*\n([\s\S]*?)^## /m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Quick start" section');
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

t.test('the README quick start: an order and a cart, paid, filled and settled', async (t) => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  t.match(
    readme,
    /SVC_TIME_SCALE=300 npm start/,
    'the quick start runs the service at scale 300, as this test does',
  );
  const [agentBlock, cartBlock, watchBlock, ...rest] = quickStartBlocks();
  t.equal(rest.length, 0, "three shell blocks: the agent's order, the cart, watching");

  let nowMs = (T0 + 60) * 1000;
  const svc = await startTestService(
    t,
    {},
    { realMs: () => nowMs },
    await embeddedTestConfig(t, { SVC_TIME_SCALE: '300' }),
  );
  t.equal(svc.config.databaseUrl, undefined, 'on the embedded default');
  const env: Record<string, string> = {};
  const fetcher = (url: string, init: RequestInit) => svc.get(url.slice(svc.url.length), init);
  const runBlock = async (block: string): Promise<Ran[]> => {
    const out: Ran[] = [];
    for (const { command, expected } of commandsOf(block.replaceAll(README_BASE, svc.url))) {
      const r = await run(command, expected, env, fetcher);
      if (r.status !== 0)
        t.ok(r.status >= 200 && r.status < 300, `${r.status} ${command.slice(0, 90)}`, {
          body: r.body.slice(0, 400),
        });
      out.push(r);
    }
    return out;
  };

  // 2. The agent registers and orders; the last command prints the purchase link.
  const ordered = await runBlock(agentBlock);
  t.equal(env.KEY.length, 80, 'a key');
  const order = JSON.parse(ordered.at(-1)!.body);
  t.match(
    new URL(order.purchase_url).pathname,
    /^\/checkout\/[\w-]+$/,
    'the order answers its purchase link',
  );

  // 3. The holder registers and pays it by card.
  const holder = await registerHolder(svc);
  const paid = await holder.pay(order.purchase_url);
  t.equal(paid.status, 200, 'the holder paid the order');

  // 4. The agent proposes a line in its cart; the holder pays the cart's checkout link.
  const carted = await runBlock(cartBlock);
  const checkoutUrl = JSON.parse(carted.at(-1)!.body).checkout_url;
  t.match(new URL(checkoutUrl).pathname, /^\/carts\/[\w-]+$/, 'the cart answers its checkout link');
  const cartPaid = await holder.pay(checkoutUrl);
  t.equal(cartPaid.status, 200, 'the holder paid the cart');

  // The session closes (both fill), then 8 more sessions sell them through and settle them.
  for (let i = 0; i < 1 + 8; i++) {
    nowMs =
      svc.services.clock.closesAt(svc.services.supervisor.openTick(MARKET)!, INTERVAL) * 1000 +
      1000;
    await svc.services.supervisor.runDue();
  }

  // 5. Watching: both orders filled, both positions settled, the account's ledger says so.
  const [orders, positions, account] = (await runBlock(watchBlock)).map((r) => JSON.parse(r.body));
  t.same(
    orders.orders.map((o: any) => o.status),
    ['filled', 'filled'],
    'the order and the cart line filled',
  );
  t.same(
    positions.positions.map((p: any) => p.status),
    ['settled', 'settled'],
    'both positions settled',
  );
  t.ok(
    positions.positions.every((p: any) => typeof p.realized_pnl === 'number'),
    'each with its realized_pnl',
  );
  const kinds = new Set(account.ledger.map((e: any) => e.kind));
  t.ok(
    kinds.has('card_charge') && kinds.has('sale_credit'),
    `the ledger has the card payments and the sales (${[...kinds].join(', ')})`,
  );
  const realized = positions.positions.reduce(
    (s: number, p: any) => s + Math.round(p.realized_pnl * 100),
    0,
  );
  t.equal(
    Math.round(account.realized_pnl_total * 100),
    realized,
    "the account's realized_pnl_total is the positions' sum",
  );
});
