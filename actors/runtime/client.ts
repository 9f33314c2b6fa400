// What the front end (src/) may use of the actor runtime: the handle that asks actors (through the
// typed addresses the kinds' messages.ts make) and runs read tasks, the refusal it throws, and the
// Idempotency-Key vocabulary. Everything else under actors/
// is internal to the workers; src/ imports only this module and the kinds' messages.ts
// (test/unit/layers.test.ts holds the line).
import type { readTasks } from '../index.js';
import type { ActorRuntime } from './shards.js';

export { ActorRuntime, type AskOptions, type IdemTicket, type RuntimeOptions } from './shards.js';
export { ActorError, AskTimedOut } from './actor.js';
export type { ActorRef, Replies } from './protocol.js';
export { REUSED_KEY, type StoredAnswer } from './idempotency.js';
export { safeError, withSafeErrors } from './log.js';
export { NotifyListener, type Notified } from './notify.js';
export { CloseLease, type LeaseLost } from './close-lease.js';

/** Every read task the workers register, by name. */
export type ReadTasks = typeof readTasks;
export type ReadName = keyof ReadTasks & string;
export type ReadArgs<N extends ReadName> = Parameters<ReadTasks[N]>[1];
export type ReadReply<N extends ReadName> = Awaited<ReturnType<ReadTasks[N]>>;

/** Runs read task `name` on the pool, its arguments and reply typed by the task's own signature. */
export function read<N extends ReadName>(
  runtime: ActorRuntime,
  name: N,
  args: ReadArgs<N>,
): Promise<ReadReply<N>> {
  return runtime.read<ReadReply<N>>(name, args);
}
