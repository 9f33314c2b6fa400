// A read task: a named, side-effect-free query over the record, run on a worker of the pool so
// record reads never queue behind actor turns nor block the front end's thread.
import type { EntityManager } from '@mikro-orm/postgresql';

/** `at`: now, in real unix seconds from the service's Clock when the read was asked (ARCHITECTURE rule 7). */
export type ReadContext = { em: EntityManager; seed: number; at: number };
export type ReadTask<A = any, R = unknown> = (ctx: ReadContext, args: A) => Promise<R>;

export function defineReads<T extends Record<string, ReadTask>>(tasks: T): T {
  return tasks;
}
