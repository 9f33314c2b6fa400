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
import { feeDue, feeKey, feeMonthAt } from '../../src/payments/fee.js';
import { orderReply } from './order-reply.js';
import { placedOrder, type PlacedOrder } from './order-row.js';
import { ActorError } from '../runtime/actor.js';
import { replayOf } from '../runtime/idempotency.js';
import type { OrderPlaced, OrderRequest } from './messages.js';
import type { IdemRequest } from '../runtime/protocol.js';
import { isUniqueViolation } from '../runtime/sql.js';
import { NOTIFY_KEPT_SQL } from '../events/log.js';
import { chargeBatch } from '../money/charge.js';
import { dayStart, weekStart } from '../money/limits.js';
import { CONNECTION_SETTINGS } from '../../orm/config.js';
import {
  PREPARE_BATCH,
  readStatements,
  writeStatement,
  type Answer,
  type OrderColumn,
} from './order-batch-sql.js';
import { placedValues } from './order-write.js';
import {
  decide,
  decisionState,
  menuKey,
  type BatchState,
  type Decision,
  type MenuRow,
  type StoredRow,
} from './order-decision.js';

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

/** The fee month of an order: its placing time on the service clock. */
const monthOf = (r: OrderRequest) => feeMonthAt(r.at);
/** An accepted order: its decision and its row (order-row.ts). */
type Accepted = Decision & { req: OrderRequest; row: PlacedOrder; participation: number | null };

/** The batch's instant (its postings and events; its expiry of stored answers): its latest request's, on the service clock. */
const batchInstant = (batch: readonly OrderRequest[]) => Math.max(...batch.map((r) => r.at));
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
      weeks: distinct(funded.map((r) => weekStart(r.at))),
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
  const st = decisionState(state);
  const stored = new Map(state.answers.map((a) => [answerKey(a), a]));

  const outcomes: Outcome[] = new Array(batch.length);
  const accepted: Accepted[] = [];
  const tokens = randomBytes(TOKEN_BYTES * batch.length); // one draw for the batch's purchase-link tokens
  batch.forEach((req, i) => {
    const prior = req.idem && stored.get(answerKey(req.idem));
    if (prior) return void (outcomes[i] = replay(prior, req.idem!));
    const decided = decide(req, st);
    if (decided instanceof ActorError) return void (outcomes[i] = decided);
    const token = tokens.subarray(i * TOKEN_BYTES, (i + 1) * TOKEN_BYTES).toString('base64url');
    const row = rowOf(
      req,
      decided,
      { orderId: state.ids![i].o, roundId: state.ids![i].r, token },
      st.menu.get(menuKey(req))!,
    );
    // An order left awaiting payment: whether its holder's fee is charged, as a payment made now would find it.
    const holder = st.agents.get(req.agentId)?.holder ?? null;
    const feeCharged = decided.funded
      ? undefined
      : holder !== null && st.feePaid.has(feeKey(holder, req.at));
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
    const [status, body] = o instanceof ActorError ? [o.status, o.body] : [200, o];
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
