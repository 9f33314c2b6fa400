// The process's side of the event log (CONTRACT.md "Events"): streams (Server-Sent Events, the
// WebSocket) subscribe here with the last id they have, and are handed every later event of their
// account exactly once, in order, read from the log (never from memory: a reconnecting consumer
// resumes from its own id). The log's NOTIFYs (one LISTEN connection per process) say whose log grew;
// a slow safety net compares the accounts' heads in case a NOTIFY was missed. The public market
// streams hear each session's close the same way.
//
// Backpressure: the log is the buffer. A stream takes events only while its socket has room
// (limits.ts STREAM_BUFFER_BYTES); what it could not take stays in the log, and the stream waits,
// handed nothing, until its transport says it has room again (`resume`: its client read), then reads
// on from its own id. A stream still waiting at STALLED_KEEPALIVES keep-alives in a row (its client
// stopped reading) is closed as behind, and resumes from its id when the client comes back.
import type { Logger } from 'pino';
import { read, type ActorRuntime, type NotifyListener } from '../../actors/runtime/client.js';
import {
  EVENTS_CHANNEL,
  SESSIONS_CHANNEL,
  type EventText,
  type EventType,
  type ManyReply,
} from '../../actors/events/messages.js';
import type { Static } from 'typebox';
import type { SessionClosed } from '../schemas/index.js';
import type { EventHubObserver, StreamCloseReason } from '../metrics.js';
import { MAX_STREAMS } from '../http/limits.js';

/**
 * Accounts read per round trip when logs grew (a close wakes every account it moved: 10k accounts
 * are 10 reads). A read this large costs PostgreSQL less than the sends it feeds cost the front
 * end's thread.
 */
const ACCOUNTS_PER_READ = 1000;
/**
 * Reads in flight at once while draining: the next ones are read while the front end sends what the
 * last one brought. Safe to overlap: a stream is handed only the events past its own `after`, which
 * each hand moves forward, so overlapping reads never repeat or reorder.
 */
const READS_IN_FLIGHT = 3;
/** Events read per account per round trip (an account with more is read again at once). */
const EVENTS_PER_ACCOUNT = 200;
/** How often the heads are compared in case a NOTIFY was missed. */
const SAFETY_NET_MS = 5000;
/** How often every stream is sent a keep-alive (CONTRACT.md: at least every 15 s). */
export const KEEPALIVE_MS = 10_000;
/** Keep-alives in a row at which a stream waits for room: it is then closed as behind (10 to 20 s without reading). */
const STALLED_KEEPALIVES = 2;

export type SessionEvent = Static<typeof SessionClosed>;

/** A consumer of one account's log. */
export type AccountStream = {
  accountId: number;
  /** The last event id it has: it is sent every later one, once. */
  after: number;
  types?: EventType[];
  /**
   * Sends events in order (each as its JSON text) while its socket has room; answers how many it
   * took. Fewer than given: it waits (handed nothing) until its transport calls EventHub.resume.
   */
  send: (events: EventText[]) => number;
  /** Ends the stream: `gone` (its `after` is older than the log keeps: 410, from `from`), `behind` (too slow), `stopping`, `revoked` (its key). */
  close: (
    why: { reason: 'gone'; from: number } | { reason: 'behind' | 'stopping' | 'revoked' },
  ) => void;
  /** A keep-alive; false: the consumer cannot keep up. */
  ping: () => boolean;
};

/** A consumer of one market's session closes. */
export type MarketStream = {
  market: string;
  send: (e: SessionEvent) => boolean;
  close: (why: { reason: 'behind' | 'stopping' }) => void;
  ping: () => boolean;
};

/**
 * `held`: the stream travels on a connection that already holds its place (`hold`, a WebSocket
 * carrying several channels): it is not counted again.
 */
export type StreamOptions = { held?: boolean };

export class EventHub {
  private readonly accounts = new Map<number, Set<AccountStream>>();
  private readonly markets = new Map<string, Set<MarketStream>>();
  /** Accounts whose log may hold events their streams lack: read by `drain`, ACCOUNTS_PER_READ at a time. */
  private readonly dirty = new Set<number>();
  private draining?: Promise<void>;
  /** The head each account was last read to (the safety net wakes only those that moved). */
  private readonly seen = new Map<number, number>();
  private count = 0;
  /** Events handed to streams in the drain under way (the fan-out metric). */
  private handed = 0;
  /** Streams carried by a held connection (not counted on their own). */
  private readonly carried = new WeakSet<AccountStream | MarketStream>();
  /** Streams waiting for room (they took less than they were handed), with the keep-alives passed since. */
  private readonly waiting = new Map<AccountStream, number>();
  /** Held connections: what ends each when the hub stops. */
  private readonly holders = new Set<{ onStop: () => void }>();
  private timer?: NodeJS.Timeout;
  private keepAlive?: NodeJS.Timeout;
  private stops: (() => void)[] = [];

  constructor(
    private readonly runtime: ActorRuntime,
    private readonly listener: NotifyListener,
    private readonly log: Logger,
    private readonly sessionEvent: (market: string, tick: number) => Promise<SessionEvent | null>,
    private readonly observer?: EventHubObserver,
  ) {}

  async start(): Promise<void> {
    this.stops.push(await this.listener.listen(EVENTS_CHANNEL, (p) => this.notified(p)));
    this.stops.push(await this.listener.listen(SESSIONS_CHANNEL, (p) => void this.closed(p)));
    this.timer = setInterval(() => void this.safetyNet(), SAFETY_NET_MS);
    this.timer.unref();
    this.keepAlive = setInterval(() => this.ping(), KEEPALIVE_MS);
    this.keepAlive.unref();
  }

  /** One keep-alive to every stream; one that cannot take it, or waited for room too long, is closed as behind. */
  private ping(): void {
    for (const set of this.accounts.values()) {
      for (const s of [...set]) {
        const waited = this.waiting.get(s);
        if (waited !== undefined && waited + 1 < STALLED_KEEPALIVES)
          this.waiting.set(s, waited + 1);
        else if (waited !== undefined || !s.ping()) {
          this.remove(s);
          this.close(s, { reason: 'behind' });
        }
      }
    }
    for (const set of this.markets.values()) {
      for (const s of [...set])
        if (!s.ping() && this.unwatch(set, s)) this.close(s, { reason: 'behind' });
    }
  }

  stop(): void {
    clearInterval(this.timer);
    clearInterval(this.keepAlive);
    for (const s of this.stops) s();
    for (const set of this.accounts.values())
      for (const s of set) this.close(s, { reason: 'stopping' });
    for (const set of this.markets.values())
      for (const s of set) this.close(s, { reason: 'stopping' });
    this.accounts.clear();
    this.markets.clear();
    const holders = [...this.holders];
    this.holders.clear();
    this.count = 0;
    for (const h of holders) h.onStop();
  }

  /**
   * Resolves once the drain under way ends (after letting notices already received start theirs), or
   * after `maxMs`: work that can wait (the record's warming after a close) leaves the cores to a
   * close's fan-out, which it would otherwise slow on a machine of few cores.
   */
  async idle(maxMs: number): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    const draining = this.draining;
    if (!draining) return;
    let timer: NodeJS.Timeout | undefined;
    const capped = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxMs)));
    await Promise.race([draining.catch(() => {}), capped]);
    clearTimeout(timer);
  }

  /** Streams held now. */
  size(): number {
    return this.count;
  }

  /** Account streams waiting for room (their clients read slower than their events come). */
  waitingCount(): number {
    return this.waiting.size;
  }

  /** Whether another stream fits (callers answer 503 otherwise, before opening anything). */
  hasRoom(): boolean {
    return this.count < MAX_STREAMS;
  }

  /**
   * Takes one place for a connection that carries several streams (a WebSocket: its streams
   * subscribe with `{ held: true }` and are not counted again). `onStop` ends the connection when the
   * hub stops. Undefined when no place is left; otherwise what frees the place (once).
   */
  hold(onStop: () => void): (() => void) | undefined {
    if (!this.hasRoom()) return undefined;
    const h = { onStop };
    this.holders.add(h);
    this.count++;
    return () => {
      if (this.holders.delete(h)) this.count--;
    };
  }

  /** Adds an account stream and sends it what it missed; returns what removes it. */
  subscribe(stream: AccountStream, opts: StreamOptions = {}): () => void {
    let set = this.accounts.get(stream.accountId);
    if (!set) this.accounts.set(stream.accountId, (set = new Set()));
    set.add(stream);
    if (opts.held) this.carried.add(stream);
    else this.count++;
    this.wake([stream.accountId]);
    return () => this.remove(stream);
  }

  /** Ends every stream of the account (its key was revoked: one key, one account). */
  endAccount(accountId: number, reason: 'revoked'): void {
    for (const s of [...(this.accounts.get(accountId) ?? [])]) {
      this.remove(s);
      this.close(s, { reason });
    }
  }

  /** A waiting stream has room again (its client read): it is handed what it lacks, from its own id. */
  resume(stream: AccountStream): void {
    if (this.waiting.delete(stream)) this.wake([stream.accountId]);
  }

  /** Adds a market stream (a resuming one first replays what it missed itself); returns what removes it. */
  watchMarket(stream: MarketStream, opts: StreamOptions = {}): () => void {
    let set = this.markets.get(stream.market);
    if (!set) this.markets.set(stream.market, (set = new Set()));
    set.add(stream);
    if (opts.held) this.carried.add(stream);
    else this.count++;
    return () => void this.unwatch(set!, stream);
  }

  /** Removes a market stream from its set (uncounting it unless carried); false when it was not there. */
  private unwatch(set: Set<MarketStream>, s: MarketStream): boolean {
    if (!set.delete(s)) return false;
    if (!this.carried.has(s)) this.count--;
    return true;
  }

  private remove(stream: AccountStream): void {
    this.waiting.delete(stream);
    const set = this.accounts.get(stream.accountId);
    if (!set?.delete(stream)) return;
    if (!this.carried.has(stream)) this.count--;
    if (!set.size) {
      this.accounts.delete(stream.accountId);
      this.seen.delete(stream.accountId);
    }
  }

  private notified(payload: string): void {
    this.wake(
      payload === '*'
        ? [...this.accounts.keys()]
        : payload
            .split(',')
            .map(Number)
            .filter((id) => this.accounts.has(id)),
    );
  }

  /** Marks accounts to read and starts the one drain (a wake during it is read by it). */
  private wake(ids: number[]): void {
    if (!ids.length) return;
    for (const id of ids) this.dirty.add(id);
    if (this.draining) return;
    const t0 = performance.now();
    this.handed = 0;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      this.observer?.fanout((performance.now() - t0) / 1000, this.handed);
    });
  }

  /** Ends a stream with its reason, counted. */
  private close<W extends { reason: StreamCloseReason }>(
    s: { close: (why: W) => void },
    why: W,
  ): void {
    this.observer?.closed(why.reason);
    s.close(why);
  }

  /**
   * Reads the dirty accounts' logs, many accounts per read task, from the least `after` of each
   * account's streams, and hands each stream what it lacks (and its types take). An account that
   * returned a full batch is read again at once.
   */
  private async drain(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (this.dirty.size || inFlight.size) {
      while (this.dirty.size && inFlight.size < READS_IN_FLIGHT) {
        const p: Promise<void> = this.readSome().finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await Promise.race(inFlight);
    }
  }

  /** One read task: up to ACCOUNTS_PER_READ dirty accounts, each from its streams' least `after`. */
  private async readSome(): Promise<void> {
    const wanted: { accountId: number; after: number }[] = [];
    for (const accountId of this.dirty) {
      if (wanted.length === ACCOUNTS_PER_READ) break;
      this.dirty.delete(accountId);
      const after = leastAfter(this.accounts.get(accountId), this.waiting);
      if (after !== undefined) wanted.push({ accountId, after });
    }
    if (!wanted.length) return;
    let got;
    try {
      got = await read(this.runtime, 'events.many', {
        accounts: wanted,
        limit: EVENTS_PER_ACCOUNT,
      });
    } catch (err) {
      // The safety net reads them again.
      this.log.warn(
        { err },
        'event streams: reading the log failed; the next notice or the safety net retries',
      );
      return;
    }
    for (const { accountId, after } of wanted) this.hand(accountId, after, got[accountId]);
  }

  /** Hands each stream of the account what a read from `from` brought past the stream's own `after`. */
  private hand(accountId: number, from: number, got: ManyReply[number] | undefined): void {
    const set = this.accounts.get(accountId);
    if (!got || !set) return;
    // No copy: a Set's iteration tolerates the removals below (a stream closed as gone or behind).
    for (const s of set) {
      // Waiting for room: handed nothing (it reads on from its own id once resumed).
      if (this.waiting.has(s)) continue;
      if ('gone' in got) {
        if (s.after + 1 >= got.from) continue;
        this.remove(s);
        this.close(s, { reason: 'gone', from: got.from });
        continue;
      }
      // A stream that subscribed during the read, from an older id than it, lacks the events before
      // the read's: the account is read again from that stream's id (sending these would skip them).
      if (s.after < from) {
        this.dirty.add(accountId);
        continue;
      }
      const mine = eventsAfter(got.events, s.after);
      if (!mine.length) continue;
      const types = s.types;
      const handed = types ? mine.filter((e) => types.includes(e.type)) : mine;
      const took = handed.length ? s.send(handed) : 0;
      this.handed += took;
      if (took >= handed.length) {
        s.after = mine[mine.length - 1].id;
        continue;
      }
      // No room for the rest: it stays in the log; the stream waits for its client to read.
      if (took > 0) s.after = handed[took - 1].id;
      this.waiting.set(s, 0);
    }
    // Streams that were not behind the swept part are read again from their own ids.
    if ('gone' in got)
      return void (this.accounts.get(accountId)?.size && this.dirty.add(accountId));
    if (!got.events.length) return;
    this.seen.set(accountId, Math.max(this.seen.get(accountId) ?? 0, got.events.at(-1)!.id));
    if (got.events.length >= EVENTS_PER_ACCOUNT) this.dirty.add(accountId);
  }

  /** Wakes the accounts whose head moved past what was last pumped (a NOTIFY missed while reconnecting). */
  private async safetyNet(): Promise<void> {
    const ids = [...this.accounts.keys()];
    if (!ids.length) return;
    try {
      const heads = await read(this.runtime, 'events.heads', { accountIds: ids });
      this.wake(ids.filter((id) => (heads[id] ?? 0) > (this.seen.get(id) ?? 0)));
    } catch (err) {
      this.log.warn({ err }, 'event heads check failed; the next one retries');
    }
  }

  private async closed(payload: string): Promise<void> {
    const [market, tick] = payload.split('/');
    const set = this.markets.get(market);
    if (!set?.size || !Number.isSafeInteger(Number(tick))) return;
    const e = await this.sessionEvent(market, Number(tick)).catch(
      (err) => (this.log.warn({ err }, 'session.closed event failed'), null),
    );
    if (!e) return;
    for (const s of [...set]) {
      if (!s.send(e) && this.unwatch(set, s)) this.close(s, { reason: 'behind' });
    }
  }
}

/**
 * A rendering of an event (an SSE message, a WebSocket frame), made once per event object and kept on
 * it: the hub hands the same objects to every stream of an account, so a hundred streams share one
 * text. Kept under a symbol of the rendering's own, not in a WeakMap: a close hands 10k events, and a
 * WeakMap's entries cost the collector (ephemerons) more than a property does. A text, not bytes:
 * with one stream per account (the usual case) a Buffer per event was an allocation sent once.
 */
export function perEvent(render: (e: EventText) => string): (e: EventText) => string {
  const key = Symbol('rendering');
  return (e) => ((e as EventText & { [key]?: string })[key] ??= render(e));
}

/** Sends events in order while `send` takes them; answers how many it took (AccountStream.send). */
export function sendWhile(events: EventText[], send: (e: EventText) => boolean): number {
  let n = 0;
  while (n < events.length && send(events[n])) n++;
  return n;
}

/** The least `after` of an account's streams that are not waiting for room (its log is read from there); undefined: none to read for. */
function leastAfter(
  set: Set<AccountStream> | undefined,
  waiting: Map<AccountStream, number>,
): number | undefined {
  let least: number | undefined;
  if (set)
    for (const s of set)
      if (!waiting.has(s) && (least === undefined || s.after < least)) least = s.after;
  return least;
}

/** The events (oldest first) past `after`: all of them, without a copy, when the stream had none of them. */
function eventsAfter(events: EventText[], after: number): EventText[] {
  let i = 0;
  while (i < events.length && events[i].id <= after) i++;
  return i === 0 ? events : events.slice(i);
}
