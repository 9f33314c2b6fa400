// One LISTEN connection per process (ARCHITECTURE.md rule 9: front ends learn that a log grew through
// PostgreSQL LISTEN/NOTIFY). Turns commit NOTIFYs (events/log.ts, the close); this listener hands
// each payload to the process's subscribers. A lost connection is opened again with capped backoff,
// and every channel then hears `*` (whatever was notified meanwhile is unknown: re-read everything).
import pg from 'pg';

/** Reconnection delays: doubling from the first to the cap, forever (a listener is never given up). */
const BACKOFF_FIRST_MS = 100;
const BACKOFF_CAP_MS = 5000;

export type Notified = (payload: string) => void;

export class NotifyListener {
  private client?: pg.Client;
  private readonly handlers = new Map<string, Set<Notified>>();
  private closed = false;
  private delay = BACKOFF_FIRST_MS;
  private connecting?: Promise<void>;
  private retry?: NodeJS.Timeout;

  constructor(
    private readonly databaseUrl: string,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Calls `handler` with each payload NOTIFYed on `channel` (and `*` after a reconnection); returns what stops it. */
  async listen(channel: string, handler: Notified): Promise<() => void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let set = this.handlers.get(channel);
    const fresh = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    await this.connect();
    if (fresh && this.client) await this.client.query(`listen ${channel}`);
    return () => set!.delete(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => {});
  }

  private connect(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    return (this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.databaseUrl });
      client.on('notification', (n) => this.deliver(n.channel, n.payload ?? ''));
      client.on('error', (err) => this.lost(client, err));
      client.on('end', () => this.lost(client));
      try {
        await client.connect();
        for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
        this.client = client;
        this.delay = BACKOFF_FIRST_MS;
      } catch (err) {
        client.end().catch(() => {});
        this.onError(err);
        this.schedule();
      } finally {
        this.connecting = undefined;
      }
    })());
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => {});
    if (this.closed) return;
    if (err) this.onError(err);
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect().then(() => {
        // Whatever was notified while no one listened is unknown: every channel re-reads.
        if (this.client) for (const channel of this.handlers.keys()) this.deliver(channel, '*');
      });
    }, this.delay);
    this.retry.unref();
    this.delay = Math.min(BACKOFF_CAP_MS, this.delay * 2);
  }

  private deliver(channel: string, payload: string): void {
    for (const h of this.handlers.get(channel) ?? []) {
      try {
        h(payload);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
