// Group commit of order placement (ARCHITECTURE "Where the speed comes from"): the orders that
// queue up in a worker while one batch commits are placed together in the next transaction, with
// set-based SQL, and each caller is answered only after that commit. Every account actor still
// awaits its own order, so one account's turns never interleave; refusals (closed session, a deal
// that is not the recorded menu row, switch off, insufficient balance) are decided per order under
// the batch's row locks and write nothing but their stored answer. The answers of orders carrying
// an Idempotency-Key are written in the same statement as the orders (runtime/idempotency.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import { centsToNumber, positionTerms, type MarketId } from '../../src/engine/index.js';
import { dealNotOnMenu, orderAmounts, type OrderAmounts } from '../../src/rules.js';
import { feeDue, feeKey, feeMonthAt } from '../../src/payments/fee.js';
import { orderReply } from './order-reply.js';
import { placedOrder, type PlacedOrder, type Terms } from './order-row.js';
import { ActorError } from '../runtime/actor.js';
import { replayOf } from '../runtime/idempotency.js';
import type { OrderPlaced, OrderRequest } from './messages.js';
import type { IdemRequest } from '../runtime/protocol.js';
import { isUniqueViolation } from '../runtime/sql.js';
import { NOTIFY_KEPT_SQL } from '../events/log.js';
import { payFromBalanceRefusal } from './funding.js';
import { batchFeeDue, chargeBatch } from '../money/charge.js';
import { dayStart, limitRefusal, limitsOf } from '../money/limits.js';
import { CONNECTION_SETTINGS } from '../../orm/config.js';
import {
  PREPARE_BATCH,
  readStatements,
  writeStatement,
  type Answer,
  type OrderColumn,
} from './order-batch-sql.js';
import { placedValues } from './order-write.js';

/** An order's answer: fresh, a stored one answered again (its key was retried), or a refusal. */
export type Placed = OrderPlaced | { replayed: true; reply: OrderPlaced };
type Outcome = Placed | ActorError;

/** Most orders one transaction places; more wait for the next batch. */
export const MAX_BATCH = 512;
/** Random bytes of an order's purchase-link token. */
const TOKEN_BYTES = 24;
/** A batch that loses a unique race (fee, idempotency key) to another process is re-decided this often at most. */
const MAX_ATTEMPTS = 3;

/** Statements sent as one text; one row list per statement, in order. */
type Exec = (text: string) => Promise<any[][]>;

/**
 * The order batch's own connection (one per worker: one batch runs at a time), opened with the ORM's
 * own connection options (MikroORM's public `getConnectionOptions()`: same server, same type
 * parsers) through node-postgres's public Client. Why not the ORM's pool: a transaction there is
 * knex's, which spends a round trip on BEGIN and another on COMMIT; here BEGIN rides with the read
 * and COMMIT with the write, two round trips per batch rather than four, which is what bounds the
 * order rate. Several statements per text use
 * PostgreSQL's simple protocol; the batch's statements are prepared once per connection
 * (order-batch-sql.ts) and each batch sends EXECUTEs, its values inlined with the driver's `escapeLiteral`.
 */
export class BatchConnection {
  private client?: pg.Client;
  constructor(
    private readonly options: () => pg.ClientConfig,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  /**
   * Sends the notices of the events a batch just committed (events/log.ts Announce: after the
   * commit, not in the transaction). Not awaited: the batch's answers do not wait for it, and its
   * failure (a full NOTIFY queue, a lost connection) cannot turn committed orders into an error; it
   * is logged, and the front ends' safety net finds the events. The next batch's statements queue
   * behind it on this connection.
   */
  announce(client: pg.Client): Promise<void> {
    return client.query(NOTIFY_KEPT_SQL).then(
      () => {},
      (err) =>
        void this.log?.warn(
          { err },
          "the order batch's event notices were not sent; the streams' safety net will find its events",
        ),
    );
  }

  async get(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client(this.options());
    // A connection lost between batches is replaced at the next one (its error would otherwise be unhandled).
    client.on('error', () => this.discard(client));
    await client.connect();
    try {
      await client.query(PREPARE_BATCH);
    } catch (err) {
      client.end().catch(() => {});
      throw err;
    }
    this.client = client;
    return client;
  }

  /** Forgets a connection whose state is unknown (a failed rollback, a lost socket). */
  discard(client = this.client): void {
    if (!client) return;
    if (this.client === client) this.client = undefined;
    client.end().catch(() => {});
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}

/** A batch connection of `em`'s database (the ORM's connection options, type parsers included). */
export const batchConnectionOf = (em: EntityManager, log?: Pick<Logger, 'warn'>) =>
  new BatchConnection(
    () => ({
      ...(em.getConnection().getConnectionOptions() as pg.ClientConfig),
      options: CONNECTION_SETTINGS,
    }),
    log,
  );

/**
 * Places `batch` in one transaction and returns one outcome per request, in order. Two round trips:
 * BEGIN, the session lock and the read in one; the write and COMMIT in the other; then the events'
 * notices, sent after the commit without holding the batch's answers (BatchConnection.announce).
 * A unique violation (another process charged the same holder's monthly fee, or answered the same
 * Idempotency-Key, a moment earlier) rolls back and re-decides the whole batch, which then sees the
 * fee charged or the answer stored. Without `via` (tests), a connection is opened for this batch.
 */
export async function placeOrders(
  em: EntityManager,
  batch: OrderRequest[],
  via?: BatchConnection,
): Promise<Outcome[]> {
  const conn = via ?? batchConnectionOf(em);
  let announced: Promise<void> | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      const client = await conn.get();
      let step = 0;
      const exec: Exec = async (text) => {
        const sent = step++ === 0 ? `begin;\n${text}` : `${text};\ncommit`;
        const res = (await client.query(sent)) as unknown as pg.QueryResult | pg.QueryResult[];
        return (Array.isArray(res) ? res : [res]).map((r) => r.rows);
      };
      try {
        const out = await placeOnce(exec, (v) => client.escapeLiteral(v), batch);
        if (step < 2)
          await client.query('commit'); // nothing to write: the read's transaction ends here
        else announced = conn.announce(client);
        return out;
      } catch (err) {
        // The transaction is aborted (or the connection lost): end it, or drop the connection.
        await client.query('rollback').catch(() => conn.discard(client));
        if (!isUniqueViolation(err) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  } finally {
    if (!via) {
      await announced; // a connection of this batch alone closes once its notices are sent
      await conn.close();
    }
  }
}

type MenuRow = {
  market: string;
  tick: number;
  idx: number;
  offer_key: string;
  unit_cost_cents: number;
  list_price_cents: number;
  max_qty: number;
  title: string | null;
  items: unknown[] | null;
  sales_velocity: number | null;
};
type StoredRow = { scope: string; key: string; hash: string; status: number; reply: OrderPlaced };
type BatchState = {
  sessions: { market: string; tick: number }[];
  agents: ({
    id: number;
    on: boolean;
    holder: number | null;
    changed_at: string | null;
  } & Parameters<typeof limitsOf>[0])[];
  /** What each paying agent funded without its holder on each UTC day (`day`: its first unix second). */
  spent: { agent: number; day: number; cents: number }[];
  accounts: { id: number; balance: number }[];
  /** The competition of each competition account in the batch (its window in real unix seconds). */
  competitions: Competing[];
  /** `holder/month` of the fees already charged. */
  fees: string[];
  menu: MenuRow[];
  answers: StoredRow[];
  ids: { o: number; r: number }[];
};
type Competing = {
  account: number;
  id: string;
  market: string;
  starts_at: number;
  ends_at: number;
  status: string;
};
/**
 * What an accepted order's decision fixed: its terms and amounts, whether it is funded at once from
 * the balance (pay_from_balance, or any order of a competition account), the monthly fee it
 * carries, and the holder paying that fee.
 */
type Decision = {
  terms: Terms;
  amounts: OrderAmounts;
  funded: boolean;
  fee: number;
  holder: number | null;
  /** The agent that funds it without its holder present (pay_from_balance): its spending limits count it. */
  standing: number | null;
};

/** The fee month of an order: its placing time on the service clock. */
const monthOf = (r: OrderRequest) => feeMonthAt(r.at);
/** An accepted order: its decision and its row (order-row.ts). */
type Accepted = Decision & { req: OrderRequest; row: PlacedOrder; participation: number | null };

const menuKey = (m: { market: string; tick: number; idx: number }) =>
  `${m.market}/${m.tick}/${m.idx}`;
/** The batch's instant (its postings and events; its expiry of stored answers): its latest request's, on the service clock. */
const batchInstant = (batch: readonly OrderRequest[]) => Math.max(...batch.map((r) => r.at));
const spentKey = (agent: number, day: number) => `${agent}/${day}`;
const answerKey = (a: { scope: string; key: string }) => `${a.scope}\n${a.key}`;

/** The batch's reads (order-batch-sql.ts): what each request needs decided, for the prepared read. */
function readSql(batch: OrderRequest[], lit: (s: string) => string): string {
  const funded = batch.filter((r) => r.payFromBalance);
  const distinct = <T>(xs: T[]) => [...new Set(xs)];
  const menu = new Map(
    batch.map((r) => [menuKey(r), { market: r.market, tick: r.tick, idx: r.idx }]),
  );
  return readStatements(
    {
      // sorted: concurrent batches take the session locks in the same order
      // Every agent's holder and month: a paying order's fee, and an unpaid one's holder_pays.
      markets: distinct(batch.map((r) => r.market)).sort(),
      agents: distinct(batch.map((r) => r.agentId)),
      accounts: distinct(batch.map((r) => r.accountId)),
      funded: distinct(funded.map((r) => r.accountId)),
      months: distinct(batch.map((r) => monthOf(r))),
      menu: [...menu.values()],
      keys: batch.filter((r) => r.idem).map((r) => ({ scope: r.idem!.scope, key: r.idem!.key })),
      n: batch.length,
      days: distinct(funded.map((r) => dayStart(r.at))),
      at: batchInstant(batch),
    },
    lit,
  );
}

async function placeOnce(
  exec: Exec,
  lit: (s: string) => string,
  batch: OrderRequest[],
): Promise<Outcome[]> {
  const state = (await exec(readSql(batch, lit))).at(-1)![0] as BatchState;
  const isOpen = new Set(state.sessions.map((x) => `${x.market}/${x.tick}`));
  const agents = new Map(state.agents.map((a) => [a.id, a]));
  const balances = new Map(state.accounts.map((a) => [a.id, a.balance]));
  const feePaid = new Set(state.fees);
  const competing = new Map(state.competitions.map((c) => [c.account, c]));
  const menu = new Map(state.menu.map((m) => [menuKey(m), m]));
  const stored = new Map(state.answers.map((a) => [answerKey(a), a]));
  const spent = new Map(state.spent.map((s) => [spentKey(s.agent, s.day), s.cents]));

  const outcomes: Outcome[] = new Array(batch.length);
  const accepted: Accepted[] = [];
  const tokens = randomBytes(TOKEN_BYTES * batch.length); // one draw for the batch's purchase-link tokens
  batch.forEach((req, i) => {
    const prior = req.idem && stored.get(answerKey(req.idem));
    if (prior) return void (outcomes[i] = replay(prior, req.idem!));
    const decided = decide(
      req,
      isOpen,
      menu.get(menuKey(req)),
      agents,
      balances,
      feePaid,
      spent,
      competing.get(req.accountId),
    );
    if (decided instanceof ActorError) return void (outcomes[i] = decided);
    const token = tokens.subarray(i * TOKEN_BYTES, (i + 1) * TOKEN_BYTES).toString('base64url');
    const row = rowOf(
      req,
      decided,
      { orderId: state.ids[i].o, roundId: state.ids[i].r, token },
      menu.get(menuKey(req))!,
    );
    // An order left awaiting payment: whether its holder's fee is charged, as a payment made now would find it.
    const holder = agents.get(req.agentId)?.holder ?? null;
    const feeCharged = decided.funded
      ? undefined
      : holder !== null && feePaid.has(feeKey(holder, req.at));
    accepted.push({
      ...decided,
      req,
      row,
      participation: feeCharged === undefined ? null : feeDue(feeCharged),
    });
    outcomes[i] = orderReply(row, req.baseUrl, decided.fee, feeCharged);
  });
  const answers = batch.flatMap((req, i) => {
    const o = outcomes[i];
    // A key answered before keeps its first answer (a reused key's 400 is not stored).
    if (!req.idem || stored.has(answerKey(req.idem))) return [];
    const [status, body] = o instanceof ActorError ? [o.status, { detail: o.detail }] : [200, o];
    return [
      {
        scope: req.idem.scope,
        key: req.idem.key,
        request_hash: req.idem.hash,
        status,
        reply: body,
        at: req.at,
      } satisfies Answer,
    ];
  });
  if (!accepted.length && !answers.length) return outcomes;
  await exec(writeSql(accepted, answers, batchInstant(batch), lit));
  return outcomes;
}

/** One order's decision under the batch's locks: its terms from the recorded menu row, or the refusal. */
function decide(
  req: OrderRequest,
  isOpen: Set<string>,
  row: MenuRow | undefined,
  agents: Map<number, BatchState['agents'][number]>,
  balances: Map<number, number>,
  feePaid: Set<string>,
  spent: Map<string, number>,
  competition?: Competing,
): Decision | ActorError {
  if (!isOpen.has(`${req.market}/${req.tick}`))
    return new ActorError(
      404,
      dealNotOnMenu(
        req.baseUrl,
        req.market,
        req.offerKey,
        'is no longer on the menu: its session closed',
      ),
    );
  // The recorded row is what the close fills: an order that does not match it is refused now,
  // never discovered at the close.
  if (!row || row.offer_key !== req.offerKey)
    return new ActorError(
      404,
      dealNotOnMenu(
        req.baseUrl,
        req.market,
        req.offerKey,
        `is not on the recorded menu of ${req.market} session ${req.tick}`,
      ),
    );
  if (req.qty > row.max_qty)
    return new ActorError(409, `deal ${req.offerKey} takes at most ${row.max_qty} units`);
  const terms = positionTerms(req.market as MarketId, row as never, req.qty);
  const amounts = orderAmounts(req.qty, terms.unitCostCents, terms.feeCents);
  const total = amounts.totalCents;
  if (competition) return competitionOrder(req, competition, balances, { amounts, terms });
  if (!req.payFromBalance)
    return { amounts, funded: false, fee: 0, holder: null, standing: null, terms };
  const agent = agents.get(req.agentId);
  if (!agent?.on || agent.holder === null) {
    return new ActorError(
      403,
      payFromBalanceRefusal(agent ?? { on: false, holder: null, changed_at: null }),
    );
  }
  // The holder's standing instructions bound what the agent funds without them (the money kernel's decision).
  const day = spentKey(req.agentId, dayStart(req.at));
  const over = limitRefusal(limitsOf(agent), spent.get(day) ?? 0, req.market, total);
  if (over) return new ActorError(403, over);
  // The holder's first real-money checkout of the month carries the participation fee (the money kernel's decision).
  const fee = batchFeeDue(feePaid, agent.holder, req.at);
  const balance = balances.get(req.accountId) ?? 0;
  if (balance < total + fee) {
    return new ActorError(
      400,
      `insufficient balance: this order needs ${centsToNumber(total + fee)} USD, the account holds ${centsToNumber(balance)} USD`,
    );
  }
  balances.set(req.accountId, balance - total - fee);
  feePaid.add(feeKey(agent.holder, req.at));
  spent.set(day, (spent.get(day) ?? 0) + total);
  return { amounts, funded: true, fee, holder: agent.holder, standing: req.agentId, terms };
}

/**
 * An order of a competition account (CONTRACT.md "Competitions"): funded at once from the
 * simulated balance, with no switch and no participation fee (no real money moves), only while its
 * competition runs (its window on the service clock) and only on the competition's market (403).
 */
function competitionOrder(
  req: OrderRequest,
  c: Competing,
  balances: Map<number, number>,
  d: Pick<Decision, 'amounts' | 'terms'>,
): Decision | ActorError {
  if (c.status !== 'running' || req.at < c.starts_at || req.at >= c.ends_at) {
    return new ActorError(
      403,
      `competition ${c.id} is not running (it runs from ${new Date(c.starts_at * 1000).toISOString()} to ${new Date(c.ends_at * 1000).toISOString()}): its account places no orders now`,
    );
  }
  if (req.market !== c.market)
    return new ActorError(
      403,
      `competition ${c.id} trades market ${c.market} only, not ${req.market}`,
    );
  const total = d.amounts.totalCents;
  const balance = balances.get(req.accountId) ?? 0;
  if (balance < total) {
    return new ActorError(
      400,
      `insufficient balance: this order needs ${centsToNumber(total)} USD, the competition account holds ${centsToNumber(balance)} simulated USD`,
    );
  }
  balances.set(req.accountId, balance - total);
  return { ...d, funded: true, fee: 0, holder: null, standing: null };
}

/** A stored answer as this order's outcome (replayOf throws the refusals; a batch returns them). */
function replay(prior: StoredRow, idem: IdemRequest): Outcome {
  try {
    return replayOf(prior, idem) as Outcome;
  } catch (err) {
    return err as ActorError;
  }
}

/** The accepted order's row (the one builder: order-row.ts), as placed on the service clock when the request was accepted. */
function rowOf(
  req: OrderRequest,
  d: Decision,
  a: { orderId: number; roundId: number; token: string },
  row: MenuRow,
): PlacedOrder {
  return placedOrder({
    id: a.orderId,
    roundId: a.roundId,
    accountId: req.accountId,
    agentId: req.agentId,
    market: req.market,
    tick: req.tick,
    idx: req.idx,
    offerKey: req.offerKey,
    qty: req.qty,
    closesAt: req.closesAt,
    terms: d.terms,
    amounts: d.amounts,
    token: a.token,
    paid: d.funded ? { source: 'balance', holderId: d.holder } : null,
    standingAgentId: d.standing,
    at: req.at,
    deal: {
      bundle: { title: row.title ?? '', items: row.items ?? [] },
      sales_velocity: row.sales_velocity ?? undefined,
    },
  });
}

/**
 * One statement writes the batch (order-batch-sql.ts): rounds and orders (order-write.ts), monthly fees, the ledger
 * postings of the funded ones (the money kernel's chargeBatch) and the stored answers; the
 * transaction's COMMIT follows.
 */
function writeSql(
  accepted: Accepted[],
  answers: Answer[],
  at: number,
  lit: (s: string) => string,
): string {
  const rows = accepted.map(
    ({ row, req, fee, participation }): Record<OrderColumn, string | number | boolean | null> => ({
      ...placedValues(row, req.at, fee),
      month: monthOf(req),
      participation,
    }),
  );
  const entries = chargeBatch(
    accepted
      .filter((a) => a.funded)
      .map((a) => ({
        accountId: a.row.account_id,
        orderId: a.row.id,
        totalCents: a.row.total_cents,
        feeCents: a.fee,
      })),
  );
  // CONTRACT.md "Events": the statement appends each order's order.created (and order.paid when funded at once).
  return writeStatement(rows, answers, entries, accepted[0]?.req.baseUrl ?? null, at, lit);
}

/**
 * Collects order requests and runs them through `placeOrders` one batch at a time: while a batch
 * commits, new requests queue and form the next one (natural group commit, no timer). One batch in
 * flight, not two: two make more, smaller commits, which is slower.
 */
export class OrderBatcher {
  private queue: {
    req: OrderRequest;
    resolve: (v: Placed) => void;
    reject: (e: unknown) => void;
  }[] = [];
  private running = false;

  private connection?: BatchConnection;

  constructor(
    private readonly em: () => EntityManager,
    private readonly log?: Pick<Logger, 'warn'>,
  ) {}

  submit(req: OrderRequest): Promise<Placed> {
    return new Promise((resolve, reject) => {
      this.queue.push({ req, resolve, reject });
      if (this.running) return;
      this.running = true;
      // The first batch after a pause starts once this event-loop turn is over, not with its first
      // order: the orders that arrived in the same message (grouped asks) or the same turn go
      // together, instead of the first one alone and its group waiting for the next commit.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      try {
        this.connection ??= batchConnectionOf(this.em(), this.log);
        const outcomes = await placeOrders(
          this.em(),
          batch.map((b) => b.req),
          this.connection,
        );
        batch.forEach((b, i) => {
          const o = outcomes[i];
          if (o instanceof ActorError) b.reject(o);
          else b.resolve(o);
        });
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.running = false;
  }
}
