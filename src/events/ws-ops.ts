// What a WebSocket client sends (src/events/websocket.ts "Frames"): each message checked as a
// frame, the first one authenticating a connection without a key, then each op handled by its entry
// of OP_HANDLERS. A request that cannot be honoured answers an error and changes nothing; a message
// outside the protocol ends the connection.
import { EVENT_TYPES, type EventType } from '../schemas/index.js';
import { authFromMessage } from './ws-auth.js';
import {
  answer,
  answerError,
  behind,
  end,
  quote,
  sendOp,
  stopChannel,
  subscribeAccount,
  watchMarket,
} from './ws-delivery.js';
import {
  CHANNELS,
  MAX_PAYLOAD_BYTES,
  MAX_PENDING,
  WS_CLOSE,
  type Conn,
  type Message,
  type WsOptions,
} from './ws-protocol.js';

type OpHandler = (o: WsOptions, c: Conn, msg: Message) => void;

/** A request that cannot be honoured: its error message's status and detail. */
type Refusal = { status: 409 | 422; detail: string };
const refusal = (status: Refusal['status'], detail: string): Refusal => ({ status, detail });
const isRefusal = (x: unknown): x is Refusal =>
  typeof x === 'object' && x !== null && 'detail' in x;

type SubscribeRequest = {
  channels: string[];
  wantsAccount: boolean;
  after: number;
  types?: EventType[];
};

/** The ops of an authenticated connection, keyed by op. */
const OP_HANDLERS: Record<string, OpHandler> = {
  auth: (_o, c) => answerError(c, 409, 'already authenticated'),
  subscribe,
  unsubscribe,
  ping: (_o, c) => answer(c, { op: 'pong' }),
};
const OPS = Object.keys(OP_HANDLERS).join(', ');

/** uWS's message handler: a text message handled now, or kept while the first message's key is checked. */
export function received(o: WsOptions, c: Conn, message: ArrayBuffer, isBinary: boolean): void {
  if (c.closed) return;
  if (isBinary) return end(c, WS_CLOSE.binary, 'binary frames are not accepted: send JSON text');
  if (message.byteLength > MAX_PAYLOAD_BYTES)
    return end(c, WS_CLOSE.tooBig, `too big: a message is at most ${MAX_PAYLOAD_BYTES} bytes`);
  // The buffer is uWS's until this callback returns: decode it now.
  const text = Buffer.from(message).toString('utf8');
  if (c.authing) return keepPending(c, text);
  handle(o, c, text);
}

function keepPending(c: Conn, text: string): void {
  (c.pending ??= []).push(text);
  if (c.pending.length > MAX_PENDING)
    end(
      c,
      WS_CLOSE.badFrame,
      `bad frame: more than ${MAX_PENDING} messages before the auth was answered`,
    );
}

/** The messages kept while the key was checked, in order, now that it is accepted. */
function handlePending(o: WsOptions, c: Conn): void {
  const pending = c.pending ?? [];
  c.pending = undefined;
  for (const text of pending) if (!c.closed) handle(o, c, text);
}

function handle(o: WsOptions, c: Conn, text: string): void {
  const msg = messageOf(c, text);
  if (!msg) return;
  if (!c.principal) return authFromMessage(o, c, msg, () => handlePending(o, c));
  const op = msg.op as string;
  if (!Object.hasOwn(OP_HANDLERS, op))
    return end(c, WS_CLOSE.badFrame, `bad frame: unknown op ${quote(op)}; the ops are ${OPS}`);
  OP_HANDLERS[op](o, c, msg);
}

/** The message of a frame: a JSON object with a string `op`; otherwise the connection ends. */
function messageOf(c: Conn, text: string): Message | undefined {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    end(c, WS_CLOSE.badFrame, 'bad frame: not JSON (messages are JSON objects with an "op")');
    return undefined;
  }
  if (
    typeof m !== 'object' ||
    m === null ||
    Array.isArray(m) ||
    typeof (m as { op?: unknown }).op !== 'string'
  ) {
    end(c, WS_CLOSE.badFrame, 'bad frame: a message is a JSON object with an "op"');
    return undefined;
  }
  return m as Message;
}

/** The channels a subscribe or unsubscribe names, or the error's detail. */
function channelsOf(msg: Message): string[] | string {
  const list = msg.channels;
  if (!Array.isArray(list) || list.length === 0 || list.length > 16)
    return `"channels" is a list of 1 to ${CHANNELS.length} of ${CHANNELS.join(', ')}`;
  const unknown = list.filter((x) => typeof x !== 'string' || !CHANNELS.includes(x));
  if (unknown.length)
    return `unknown channel ${quote(unknown[0])}: the channels are ${CHANNELS.join(', ')}`;
  return [...new Set(list as string[])];
}

/** A subscribe's `types`: undefined for all of them. */
function typesOf(msg: Message, wantsAccount: boolean): EventType[] | undefined | Refusal {
  if (msg.types === undefined) return undefined;
  if (!wantsAccount) return refusal(422, '"types" applies to the account channel');
  if (!Array.isArray(msg.types) || msg.types.length > EVENT_TYPES.length * 2)
    return refusal(422, `"types" is a list of event types: ${EVENT_TYPES.join(', ')}`);
  const bad = msg.types.find((x) => !(EVENT_TYPES as unknown[]).includes(x));
  if (bad !== undefined) return refusal(422, `unknown event type ${quote(bad)}`);
  return msg.types.length ? [...new Set(msg.types as EventType[])] : undefined;
}

/** A subscribe's channels, `after` and `types`, checked in that order, or why it cannot be honoured. */
function subscribeRequest(c: Conn, msg: Message): SubscribeRequest | Refusal {
  const extra = Object.keys(msg).filter((k) => !['op', 'channels', 'after', 'types'].includes(k));
  if (extra.length)
    return refusal(422, `subscribe takes op, channels, after and types; not ${quote(extra[0])}`);
  const channels = channelsOf(msg);
  if (typeof channels === 'string') return refusal(422, channels);
  const wantsAccount = channels.includes('account');
  const after = msg.after ?? 0;
  if (typeof after !== 'number' || !Number.isSafeInteger(after) || after < 0)
    return refusal(422, '"after" is the last event id you have: a whole number, 0 or more');
  if (msg.after !== undefined && !wantsAccount)
    return refusal(422, '"after" applies to the account channel');
  const types = typesOf(msg, wantsAccount);
  if (isRefusal(types)) return types;
  const again = channels.find((ch) => (ch === 'account' ? c.account : c.markets?.has(ch)));
  if (again) return refusal(409, `already subscribed to ${again}: unsubscribe first`);
  return { channels, wantsAccount, after, types };
}

function subscribe(o: WsOptions, c: Conn, msg: Message): void {
  const r = subscribeRequest(c, msg);
  if (isRefusal(r)) return answerError(c, r.status, r.detail);
  const { channels, wantsAccount, after } = r;
  if (!sendOp(c, { op: 'subscribed', channels, ...(wantsAccount ? { after } : {}) }))
    return behind(c);
  for (const ch of channels) {
    if (ch === 'account') subscribeAccount(o.hub, c, after, r.types);
    else watchMarket(o.hub, c, ch);
    if (c.closed) return;
  }
}

function unsubscribe(_o: WsOptions, c: Conn, msg: Message): void {
  const extra = Object.keys(msg).filter((k) => !['op', 'channels'].includes(k));
  if (extra.length)
    return answerError(c, 422, `unsubscribe takes op and channels; not ${quote(extra[0])}`);
  const channels = channelsOf(msg);
  if (typeof channels === 'string') return answerError(c, 422, channels);
  for (const ch of channels) stopChannel(c, ch);
  answer(c, { op: 'unsubscribed', channels });
}
