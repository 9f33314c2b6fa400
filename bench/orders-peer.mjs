// The fair peer of the orders scenario (bench/orders.mjs): a NAIVE implementation
// of `POST /api/v1/orders` with `pay_from_balance`, as a plain Fastify 5 + node-postgres service would
// write it: one transaction per request, one parameterised statement per step, on the service's own
// migrated database (same schema, same fixture, same agents and deals). It makes the same checks and
// writes the same rows per order as the service's order batch (actors/account/order-batch.ts):
//
//   BEGIN
//   key lookup        agent by key id, sha256 of the key compared in constant time (401 otherwise)
//   session lock      pg_advisory_xact_lock_shared(hashtext('session:<market>')): a close waits for
//                     this transaction, an order after the close finds its session closed
//   session check     the deal's recorded menu row in the market's OPEN session (404 otherwise), and
//                     the session's close time not passed; qty <= max_qty (422)
//   funding check     autonomous funding on and a holder (403)
//   monthly fee       the holder's fee of the month due? (its row; a concurrent first charge loses on
//                     the row's key and the transaction is retried, as the service does)
//   balance debit     update account ... where balance covers total + fee returning the balance (400)
//   round row         trade_round, funded from the balance
//   order row         orders, paid from the balance
//   ledger rows       order_debit (and monthly_fee) with their balance_after; the monthly_fee row
//   COMMIT, then the 201 with the service's own answer (order-reply.js), the same bytes
//
// The arithmetic (terms, amounts, fee month, the answer) is imported from the built service (dist/)
// so that both sides charge the same cents; only the stack differs. Not a product: only the
// pay_from_balance path exists. Environment: DATABASE_URL, PORT, HOST (127.0.0.1), BASE_URL,
// PEER_POOL (connections, default 10 = node-postgres's default pool size).
import Fastify from 'fastify';
import pg from 'pg';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (p) => import(pathToFileURL(path.join(ROOT, 'dist', p)).href);
const { MARKETS, positionTerms } = await dist('src/engine/index.js');
const { orderAmounts } = await dist('src/rules.js');
const { feeMonth, MONTHLY_FEE_CENTS } = await dist('src/payments/fee.js');
const { orderReply } = await dist('actors/account/order-reply.js');

const HOST = process.env.HOST ?? '127.0.0.1';
const PORT = Number(process.env.PORT ?? 8090);
const BASE_URL = process.env.BASE_URL ?? `http://${HOST}:${PORT}`;
const POOL = Number(process.env.PEER_POOL ?? 10);
if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is required');

// bigint and numeric columns as JS numbers (the service's ORM connection does the same; ids and cents fit).
pg.types.setTypeParser(20, Number);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: POOL });

class Refusal extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

const ATTEMPTS = 3; // a transaction that lost the month's fee row to a concurrent one is decided again
const sha256 = (s) => createHash('sha256').update(s).digest('hex');
const sameHash = (a, b) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

async function placeOrder(key, body) {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query('begin');
      const out = await placeIn(client, key, body);
      await client.query('commit');
      return out;
    } catch (err) {
      await client.query('rollback').catch(() => {});
      if (err.code !== '23505' || attempt >= ATTEMPTS) throw err;
    } finally {
      client.release();
    }
  }
}

async function placeIn(client, key, { market, offer_key: offerKey, qty }) {
  const {
    rows: [agent],
  } = await client.query(
    'select id, account_id, key_hash, holder_id, autonomous_funding from agent where key_id = $1',
    [key.slice(0, 20)],
  );
  if (!agent || !sameHash(agent.key_hash, sha256(key))) throw new Refusal(401, 'unknown API key');
  await client.query('select pg_advisory_xact_lock_shared(hashtext($1))', [`session:${market}`]);
  const {
    rows: [row],
  } = await client.query(
    `select m.tick, m.idx, m.unit_cost_cents, m.list_price_cents, m.max_qty, m.deal
       from menu_row m join market_session s on s.market = m.market and s.tick = m.tick and s.closed_at is null
      where m.offer_key = $1 and m.market = $2`,
    [offerKey, market],
  );
  const closesAt = row ? (row.tick + 1) * MARKETS[market].interval_seconds : 0;
  // The peer's one clock (the machine's, as the service's without SVC_TIME_SCALE): the session check,
  // the fee month and every instant it stores, passed as a parameter (never the database's now()).
  const now = Date.now() / 1000;
  if (!row || now >= closesAt)
    throw new Refusal(404, `deal ${offerKey} is not on the current menu of ${market}`);
  if (qty > row.max_qty) throw new Refusal(422, `qty must be at most ${row.max_qty}`);
  if (!agent.autonomous_funding || agent.holder_id === null)
    throw new Refusal(403, 'autonomous funding is off for this agent');

  const terms = positionTerms(market, row, qty);
  const amounts = orderAmounts(qty, terms.unitCostCents, terms.feeCents);
  const month = feeMonth(new Date(now * 1000));
  const { rowCount: feePaid } = await client.query(
    'select 1 from monthly_fee where holder_id = $1 and month = $2',
    [agent.holder_id, month],
  );
  const fee = feePaid ? 0 : MONTHLY_FEE_CENTS;
  const {
    rows: [acct],
  } = await client.query(
    'update account set balance_cents = balance_cents - $2 where id = $1 and balance_cents >= $2 returning balance_cents',
    [agent.account_id, amounts.totalCents + fee],
  );
  if (!acct) throw new Refusal(400, 'insufficient balance');
  const {
    rows: [round],
  } = await client.query(
    `insert into trade_round (account_id, amount_cents, status, source, fee_amount_cents, charged_cents, funded_at, created_at)
     values ($1, $2, 'funded', 'balance', $3, $4, to_timestamp($5::float8), to_timestamp($5::float8)) returning id`,
    [agent.account_id, amounts.totalCents, fee, amounts.totalCents + fee, now],
  );
  const token = randomBytes(24).toString('base64url');
  const {
    rows: [order],
  } = await client.query(
    `insert into orders (account_id, agent_id, round_id, market, tick, idx, offer_key, qty, unit_cost_cents, list_price_cents, fee_cents,
                         holding_cents, gross_cents, fee_amount_cents, total_cents, token, closes_at, status, payment_source, created_at, paid_at, paid_by_holder)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, 'paid', 'balance', to_timestamp($19::float8), to_timestamp($19::float8), $18)
     returning id, created_at, paid_at`,
    [
      agent.account_id,
      agent.id,
      round.id,
      market,
      row.tick,
      row.idx,
      offerKey,
      qty,
      terms.unitCostCents,
      terms.listPriceCents,
      terms.feeCents,
      terms.holdingCents,
      amounts.grossCents,
      amounts.feeAmountCents,
      amounts.totalCents,
      token,
      closesAt,
      agent.holder_id,
      now,
    ],
  );
  // The ledger rows carry the running balance after each (the debit first, then the fee).
  const ref = `order:${order.id}`;
  const afterDebit = acct.balance_cents + fee;
  await client.query(
    `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values ($1, 'order_debit', $2, $3, $4, to_timestamp($5::float8))`,
    [agent.account_id, -amounts.totalCents, afterDebit, ref, now],
  );
  if (fee) {
    await client.query(
      `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values ($1, 'monthly_fee', $2, $3, $4, to_timestamp($5::float8))`,
      [agent.account_id, -fee, acct.balance_cents, ref, now],
    );
    await client.query(
      'insert into monthly_fee (holder_id, month, account_id, round_id, amount_cents, created_at) values ($1, $2, $3, $4, $5, to_timestamp($6::float8))',
      [agent.holder_id, month, agent.account_id, round.id, fee, now],
    );
  }
  return orderReply(
    {
      id: order.id,
      market,
      tick: row.tick,
      offer_key: offerKey,
      qty,
      unit_cost_cents: terms.unitCostCents,
      list_price_cents: terms.listPriceCents,
      gross_cents: amounts.grossCents,
      fee_amount_cents: amounts.feeAmountCents,
      total_cents: amounts.totalCents,
      status: 'paid',
      payment_source: 'balance',
      token,
      closes_at: closesAt,
      created_at: order.created_at,
      paid_at: order.paid_at,
      filled_at: null,
      position_id: null,
      round_id: round.id,
      account_id: agent.account_id,
      agent_id: agent.id,
      deal: {
        bundle: { title: row.deal?.bundle?.title ?? '', items: row.deal?.bundle?.items ?? [] },
        sales_velocity: row.deal?.sales_velocity ?? undefined,
      },
    },
    BASE_URL,
    fee,
  );
}

const app = Fastify({ logger: false });
app.post(
  '/api/v1/orders',
  {
    schema: {
      body: {
        type: 'object',
        required: ['market', 'offer_key', 'qty'],
        properties: {
          market: { type: 'string', enum: Object.keys(MARKETS) },
          offer_key: { type: 'string' },
          qty: { type: 'integer', minimum: 1 },
          pay_from_balance: { type: 'boolean', const: true },
        },
      },
    },
  },
  async (req, reply) => {
    const m = /^Bearer\s+([A-Za-z0-9]{80})\s*$/.exec(req.headers.authorization ?? '');
    if (!m)
      return reply
        .code(401)
        .send({ detail: 'an API key is required: Authorization: Bearer <key>' });
    try {
      const placed = await placeOrder(m[1], req.body);
      return reply.code(201).send(placed);
    } catch (err) {
      if (err instanceof Refusal) return reply.code(err.status).send({ detail: err.message });
      throw err;
    }
  },
);

await app.listen({ host: HOST, port: PORT });
console.log(
  JSON.stringify({ level: 30, msg: `orders peer listening on ${HOST}:${PORT}, pool ${POOL}` }),
);
const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
