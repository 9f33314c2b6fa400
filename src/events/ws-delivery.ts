// What the WebSocket sends (src/events/websocket.ts "Backpressure"): frames within the connection's
// send buffer, the close that ends a connection with its reason, and the channels' streams through
// the event hub, which wait for the connection to drain when it has no room.
import type { WebSocket } from 'uWebSockets.js';
import type { EventType } from '../schemas/index.js';
import type { EventText } from '../../actors/events/messages.js';
import {
  perEvent,
  sendWhile,
  type AccountStream,
  type EventHub,
  type SessionEvent,
} from './hub.js';
import { goneDetail } from './query.js';
import { SEND_BUFFER_BYTES, WS_CLOSE, type Conn } from './ws-protocol.js';

/** An account event's frame, made once for every connection handed it. */
const accountFrame = perEvent((e) => `{"channel":"account","event":${e.json}}`);

/** ASCII only, at most 123 bytes (a close frame's reason). */
const reasonText = (s: string) => s.replace(/[^\x20-\x7e]/g, '?').slice(0, 123);
/** A client's value quoted in a reason or error: short and printable. */
export const quote = (v: unknown) => reasonText(JSON.stringify(v) ?? String(v)).slice(0, 40);

/** Sends a text frame unless what waits would pass the send buffer's bound with it (false: no room, or closed). */
export function sendText(c: Conn, text: string | Uint8Array): boolean {
  if (c.closed) return false;
  const ws = c.ws!;
  const waiting = ws.getBufferedAmount();
  if (
    waiting > 0 &&
    waiting + (typeof text === 'string' ? Buffer.byteLength(text) : text.byteLength) >
      SEND_BUFFER_BYTES
  )
    return false;
  return ws.send(text, false, false) !== 2;
}

export const sendOp = (c: Conn, msg: Record<string, unknown>) => sendText(c, JSON.stringify(msg));

/** Closes the connection with a code and a reason (once). */
export function end(c: Conn, code: number, reason: string): void {
  if (c.closed) return;
  c.ws!.end(code, reasonText(reason));
}

const resumeHint = (c: Conn) =>
  c.account
    ? `; reconnect and subscribe with after=${c.account.last}`
    : '; reconnect and subscribe again';

/** Too slow to read: closed with the id to resume from. */
export const behind = (c: Conn) =>
  end(c, WS_CLOSE.behind, `behind: too slow to read${resumeHint(c)}`);

/** The service is stopping: closed with the id to resume from. */
export const stopping = (c: Conn) => end(c, WS_CLOSE.stopping, `stopping${resumeHint(c)}`);

/** An answer of an op, or behind when it finds no room. */
export function answer(c: Conn, msg: Record<string, unknown>): void {
  if (!sendOp(c, msg)) behind(c);
}

/** An error message (the connection stays), or behind when it finds no room. */
export const answerError = (c: Conn, status: number, detail: string) =>
  answer(c, { op: 'error', status, detail });

/** The account channel from `after`: the account's events through the hub, each as a frame. */
export function subscribeAccount(
  hub: EventHub,
  c: Conn,
  after: number,
  types: EventType[] | undefined,
): void {
  const state: NonNullable<Conn['account']> = { stop: () => {}, last: after };
  c.account = state;
  const sent = (e: EventText) => {
    if (!sendText(c, accountFrame(e))) return false;
    state.last = e.id;
    return true;
  };
  state.stream = {
    accountId: c.principal!.accountId,
    after,
    types,
    send: (events: EventText[]) => sendWhile(events, sent),
    ping: () => !c.closed,
    close: (why) => accountClosed(c, why),
  };
  state.stop = hub.subscribe(state.stream, { held: true });
}

/** The hub ends the account channel: the connection closes with why. */
function accountClosed(c: Conn, why: Parameters<AccountStream['close']>[0]): void {
  if (why.reason === 'gone') {
    sendOp(c, { op: 'error', status: 410, detail: goneDetail(why.from) });
    return end(
      c,
      WS_CLOSE.gone,
      `gone: events before id ${why.from} are no longer kept; re-read orders and positions, then after=${why.from - 1}`,
    );
  }
  if (why.reason === 'behind') return behind(c);
  if (why.reason === 'revoked')
    return end(c, WS_CLOSE.unauthorized, 'revoked: this API key was revoked by its holder');
  stopping(c);
}

/** A `market:<id>` channel: the market's session closes through the hub, each as a frame. */
export function watchMarket(hub: EventHub, c: Conn, channel: string): void {
  const market = channel.slice('market:'.length);
  const prefix = `{"channel":${JSON.stringify(channel)},"event":`;
  const stop = hub.watchMarket(
    {
      market,
      send: (e: SessionEvent) =>
        sendText(c, `${prefix}${JSON.stringify({ type: 'session.closed', ...e })}}`),
      ping: () => !c.closed,
      close: (why) => (why.reason === 'behind' ? behind(c) : stopping(c)),
    },
    { held: true },
  );
  (c.markets ??= new Map()).set(channel, stop);
}

/** Stops a channel (nothing when it is not subscribed). */
export function stopChannel(c: Conn, channel: string): void {
  if (channel === 'account') {
    c.account?.stop();
    c.account = undefined;
  } else {
    c.markets?.get(channel)?.();
    c.markets?.delete(channel);
  }
}

/** uWS's drain: half the bound free again, the account channel (if it waits for room) reads on from its last id. */
export function drained(hub: EventHub, ws: WebSocket<Conn>): void {
  const c = ws.getUserData();
  if (!c.closed && c.account?.stream && ws.getBufferedAmount() <= SEND_BUFFER_BYTES / 2)
    hub.resume(c.account.stream);
}
