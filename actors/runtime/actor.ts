// What an actor kind is. Orleans-style: an actor is addressed by id ("market:m15"), activated on
// demand from storage, and its turns never interleave. A kind declares its messages as a typed
// union with the reply of each message kind (its messages.ts) and one handler per message kind; the
// runtime does the rest.
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { IdemRequest, Replies } from './protocol.js';

/** Services a turn may use. `em` is a fresh fork per turn: identity maps never leak across turns. */
export type TurnContext = {
  em: EntityManager;
  /** The actor's own id without the kind prefix ("m15" for "market:m15"). */
  id: string;
  seed: number;
  /** The service's public address (BASE_URL), for what a turn serves beyond its reply (orders in events). */
  baseUrl: string;
  /** The request's Idempotency-Key, for handlers that store their answer themselves (`ownsIdempotency`). */
  idem?: IdemRequest;
  /** The worker's log, for what a turn cannot answer (a failure after its commit). */
  log: Logger;
  /**
   * Now, for this turn: real unix seconds from the service's Clock when the message was sent
   * (ARCHITECTURE rule 7). Every instant the turn stores or compares is this one, passed to SQL as
   * a parameter; the database server's own clock is never read.
   */
  at: number;
};

/**
 * What a handler that stores its own answers (runtime/idempotency.ts) returns for a repeated key: the
 * stored answer, as the database gives it back; the worker unwraps it.
 */
export type Replay = { replayed: true; reply: unknown };

/** One handler per message kind, answering that kind's reply of `R` (the kind's messages.ts declares `R`). */
type Handlers<S, M extends { kind: string }, R extends Replies<M>> = {
  [K in M['kind']]: (
    state: S,
    msg: Extract<M, { kind: K }>,
    ctx: TurnContext,
  ) => Promise<R[K] | Replay>;
};

export type ActorKind<S = any, M extends { kind: string } = any, R extends Replies<M> = any> = {
  kind: string;
  /** Loads state from the database; called on first message after (re)activation. */
  activate: (ctx: TurnContext) => Promise<S>;
  handlers: Handlers<S, M, R>;
  /**
   * Messages whose handlers store their own answer under the request's Idempotency-Key (the order
   * batch writes answers with its orders). Every other turn with a key runs in a transaction that
   * stores its answer (runtime/idempotency.ts).
   */
  ownsIdempotency?: readonly M['kind'][];
};

/**
 * An actor kind: state `S`, messages `M`, replies `R` (messages.ts declares `M` and `R`; every
 * handler's answer must be its kind's reply, so the replies `ask` promises cannot drift from them).
 */
export function defineActor<S, M extends { kind: string }, R extends Replies<M>>(
  def: ActorKind<S, M, R>,
): ActorKind<S, M, R> {
  return def;
}

/** A refusal the caller should see as an HTTP status with a `detail` (the turn's writes rolled back). */
export class ActorError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    /** Seconds a client should wait before retrying (503 answers). */
    readonly retryAfter?: number,
    /** Machine-readable fields answered beside `detail` (a limit refusal's limit and figures). */
    readonly facts?: Record<string, unknown>,
  ) {
    super(detail);
  }

  /** The refusal's JSON body, as answered and as stored under an Idempotency-Key. */
  get body(): Record<string, unknown> {
    return { detail: this.detail, ...this.facts };
  }

  /** A refusal from its stored body (`{detail, ...facts}`). */
  static fromBody(status: number, body: unknown): ActorError {
    const { detail, ...facts } = (body ?? {}) as Record<string, unknown>;
    return new ActorError(
      status,
      String(detail ?? 'refused'),
      undefined,
      Object.keys(facts).length ? facts : undefined,
    );
  }

  /** A refusal answered again from a stored answer (Idempotency-Key), not decided now. */
  replayed = false;
}

/**
 * An ask whose answer did not come within its time-out (503). The turn may still run and commit:
 * whoever asked again learns what happened from the actor's own once-only rule.
 */
export class AskTimedOut extends ActorError {}
