// A worker's way to a streaming replica, for the read tasks a module declares replica-safe (the
// closed record). A read goes there only when the replica has replayed at least what the front end
// has seen committed (the read's mark): the replica then holds every closed session the primary
// would show, exactly as the primary shows it, so no client sees a closed session's record change.
// Otherwise (behind, unreachable, a query cancelled by recovery) the primary serves the read.
import { performance } from 'node:perf_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import { openOrm, type Orm } from '../../orm/database.js';

/** A module's replica-safe reads: their names, and how to tell that a replica has replayed a mark. */
export type ReplicaReads<P = any, M = any> = {
  names: readonly string[];
  /** The replica's position (one small query). */
  position: (em: EntityManager) => Promise<P>;
  /** Whether a replica at `position` holds everything `mark` names. */
  covers: (position: P, mark: M) => boolean;
};

/** A replica found behind a mark is asked again after this long; reads meanwhile go to the primary. */
export const RECHECK_MS = 20;
/** A position query slower than this counts as a failure. */
export const CHECK_TIMEOUT_MS = 1_000;
/** After a failure the replica rests this long (reads go to the primary), then is tried again. */
export const REST_MS = 5_000;

export class ReplicaGate {
  private orm: Promise<Orm> | undefined;
  private position: unknown;
  private checking: Promise<void> | undefined;
  private lastCheck = Number.NEGATIVE_INFINITY;
  private restUntil = 0;

  constructor(
    private readonly url: string,
    private readonly poolMax: number,
    private readonly reads: ReplicaReads,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /** Whether read task `name` may be served from a replica at all. */
  serves(name: string): boolean {
    return this.reads.names.includes(name);
  }

  /** A fork on the replica for a read under `mark`, or undefined: read the primary. */
  async emFor(mark: unknown): Promise<EntityManager | undefined> {
    if (mark === undefined || performance.now() < this.restUntil) return undefined;
    if (!this.covers(mark)) {
      if (!this.checking && performance.now() - this.lastCheck >= RECHECK_MS) {
        this.checking = this.check().finally(() => (this.checking = undefined));
      }
      // One position query at a time, shared by the reads that arrive while it runs.
      if (this.checking) await this.checking;
      if (!this.covers(mark)) return undefined;
    }
    return (await this.open()).em.fork();
  }

  /** A read that failed on the replica: rest it, so the next reads go to the primary. */
  failed(err: unknown): void {
    this.rest(err);
  }

  async close(): Promise<void> {
    const orm = this.orm;
    this.orm = undefined;
    if (orm) await (await orm.catch(() => undefined))?.close();
  }

  private covers(mark: unknown): boolean {
    return this.position !== undefined && this.reads.covers(this.position, mark);
  }

  private async check(): Promise<void> {
    this.lastCheck = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(`the replica did not answer its position within ${CHECK_TIMEOUT_MS} ms`),
            ),
          CHECK_TIMEOUT_MS,
        );
      });
      this.position = await Promise.race([
        this.open().then((orm) => this.reads.position(orm.em.fork())),
        timeout,
      ]);
    } catch (err) {
      this.rest(err);
    } finally {
      clearTimeout(timer);
    }
  }

  private rest(err: unknown): void {
    this.position = undefined;
    this.restUntil = performance.now() + REST_MS;
    this.onFailure(err);
  }

  private open(): Promise<Orm> {
    if (!this.orm) {
      const opening = openOrm(this.url, this.poolMax, { migrations: false });
      this.orm = opening;
      // A failed open is forgotten, so the next check after the rest opens again.
      opening.catch(() => {
        if (this.orm === opening) this.orm = undefined;
      });
    }
    return this.orm;
  }
}
