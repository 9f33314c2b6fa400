// The closes' lease (CONTRACT.md "Several front ends"): of the processes serving one database, the
// one holding it runs the market closes; the others follow them. A session-level advisory lock on a
// connection of its own, so it lives exactly as long as that connection: a process that dies (kill
// -9) gives it up as its socket closes, and another takes it at its next try. Correctness never
// rests on it (the market actor closes a session once, ARCHITECTURE rule 3, so two holders for a
// moment only race); it keeps the closes in one process, in order, and says which.
import pg from 'pg';

/** The lock's key: fixed and positive, so pg_locks shows it as classid 0, objid KEY (holder()). */
export const CLOSES_LOCK_KEY = 0x5356_434c;
/** How long a connect or a try may take before it counts as failed. */
const TRY_TIMEOUT_MS = 3000;

const TRY_SQL = 'select pg_try_advisory_lock($1::bigint) as held';
/** Who holds it: the application_name its connection announced (the node's name). */
const HOLDER_SQL = `select a.application_name as node
  from pg_locks l join pg_stat_activity a on a.pid = l.pid
 where l.locktype = 'advisory' and l.granted and l.classid = 0 and l.objid = $1 and l.objsubid = 1
   and l.database = (select oid from pg_database where datname = current_database())
 limit 1`;

export type LeaseLost = (err?: unknown) => void;

export class CloseLease {
  private client?: pg.Client;
  private holding = false;
  private closed = false;

  /** `node` names the holder in pg_stat_activity (PostgreSQL keeps 63 bytes of it); read when connecting. */
  constructor(
    private readonly databaseUrl: string,
    private readonly node: () => string,
    private readonly onLost: LeaseLost,
  ) {}

  get held(): boolean {
    return this.holding;
  }

  /** Takes the lease if no other process holds it; true while this process holds it. */
  async tryTake(): Promise<boolean> {
    if (this.holding) return true;
    const c = await this.connection();
    const r = await c.query({ text: TRY_SQL, values: [CLOSES_LOCK_KEY] });
    this.holding = r.rows[0]?.held === true && this.client === c && !this.closed;
    return this.holding;
  }

  /** The node holding the lease now, or null when none does (between a death and a takeover). */
  async holder(): Promise<string | null> {
    if (this.holding) return this.node();
    const c = await this.connection();
    const r = await c.query({ text: HOLDER_SQL, values: [CLOSES_LOCK_KEY] });
    return (r.rows[0]?.node as string | undefined) ?? null;
  }

  /** Gives the lease up (its connection ends) and tries no more. */
  async release(): Promise<void> {
    this.closed = true;
    this.holding = false;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }

  private async connection(): Promise<pg.Client> {
    if (this.closed) throw new Error('the closes lease was released');
    if (this.client) return this.client;
    const c = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: this.node().slice(0, 63),
      connectionTimeoutMillis: TRY_TIMEOUT_MS,
      query_timeout: TRY_TIMEOUT_MS,
      keepAlive: true,
    });
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c));
    try {
      await c.connect();
    } catch (err) {
      c.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await c.end().catch(() => {});
      throw new Error('the closes lease was released');
    }
    this.client = c;
    return c;
  }

  /** The connection ended: whatever this process held, it holds no more. */
  private lost(c: pg.Client, err?: unknown): void {
    if (this.client !== c) return;
    this.client = undefined;
    c.end().catch(() => {});
    const had = this.holding;
    this.holding = false;
    if (had && !this.closed) this.onLost(err);
  }
}
