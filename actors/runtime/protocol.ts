// The envelope between the front end and a shard's worker, kept to structured-clone-able data.
/** What the front end sends with a turn: who asks on which route (`scope`), the key, the body's hash. */
export type IdemRequest = { scope: string; key: string; hash: string };

/**
 * `msg` is the actor kind's message union member, tagged by `kind`. `at` is when the front end sent
 * it, in real unix seconds from the service's one Clock (ARCHITECTURE rule 7): the instant a turn
 * stores or compares, never the database server's own clock.
 */
export type Envelope = {
  to: string;
  msg: { kind: string; [field: string]: unknown };
  idem?: IdemRequest;
  at: number;
};

/** Several asks for one shard in one message (AskOptions.grouped); the reply is their results, in order. */
export type BatchEnvelope = { batch: Envelope[] };

/** A read task: a named query over the record, run on any shard outside the mailboxes. */
/**
 * `mark`: what the front end has seen committed (the record's open sessions), when it may be read
 * from a replica: a worker reads a replica-safe task there only if the replica has replayed it.
 */
export type ReadEnvelope = { read: string; args: unknown; at: number; mark?: unknown };

/** Where a replica-safe read task was served from (others say nothing). */
export type ReadSource = 'replica' | 'primary';

export type TurnResult =
  | { ok: true; reply: unknown; turnMs: number; replayed?: boolean; from?: ReadSource }
  | {
      ok: false;
      status: number;
      detail: string;
      turnMs: number;
      retryAfter?: number;
      facts?: Record<string, unknown>;
      replayed?: boolean;
    };

/** Stable FNV-1a hash of an actor id: the same id lands on the same shard in every process. */
export function shardOf(actorId: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < actorId.length; i++) {
    h ^= actorId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/** An actor kind's replies by message kind: one entry for each member of its message union `M`. */
export type Replies<M extends { kind: string }> = { [K in M['kind']]: unknown };

declare const speaks: unique symbol;

/**
 * The address of one actor: at run time its id, the string "kind:id" the runtime routes by; for the
 * compiler, the kind's message union `M` and reply map `R`, so `ask` takes only that kind's messages
 * and answers the reply of the message's kind. Made only by `actorRef`, through each kind's one
 * helper in its messages.ts (`accountRef(42)`): no address is written by hand.
 */
export type ActorRef<M extends { kind: string }, R extends Replies<M>> = string & {
  readonly [speaks]: { msg: M; replies: R };
};

/** Builds the address of actor `id` of `kind`; each kind's messages.ts has the one helper that calls it. */
export function actorRef<M extends { kind: string }, R extends Replies<M>>(
  kind: string,
  id: string | number,
): ActorRef<M, R> {
  return `${kind}:${id}` as ActorRef<M, R>;
}

export function splitActorId(actorId: string): { kind: string; id: string } {
  const i = actorId.indexOf(':');
  if (i <= 0) throw new Error(`actor id must be "kind:id", got ${JSON.stringify(actorId)}`);
  return { kind: actorId.slice(0, i), id: actorId.slice(i + 1) };
}
