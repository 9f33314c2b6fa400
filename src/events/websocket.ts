// The WebSocket at GET /api/v1/ws (CONTRACT.md "Events"), on uWebSockets.js's own WebSocket
// support. One connection carries an agent's account channel (its log, resumable with `after`) and
// any markets' session closes, read through the process's event hub (never the log directly).
//
// Frames (JSON text; one message each way per frame):
//   client → server  {"op":"auth","key":"..."}            (first message, unless the upgrade had the key)
//                    {"op":"subscribe","channels":["account","market:m15"],"after":N,"types"?:[...]}
//                    {"op":"unsubscribe","channels":[...]}   {"op":"ping"}
//   server → client  {"op":"authenticated","agent_id":N}   {"op":"subscribed","channels":[...],"after":N}
//                    {"op":"unsubscribed","channels":[...]} {"op":"pong"}
//                    {"op":"error","status":422|409|410,"detail":"..."}
//                    {"channel":"account","event":{id,type,created_at,data}}
//                    {"channel":"market:m15","event":{"type":"session.closed",market,tick,next_tick,tick_closes_at}}
// A subscribe that names an unknown channel or type, a bad `after`, or a channel already subscribed
// answers an error message and changes nothing (the connection stays). Everything else that is not
// the protocol ends the connection with a close code and a reason (WS_CLOSE, ws-protocol.ts); uWS itself drops
// (no close frame) a message over MAX_FRAME_BYTES and a text frame that is not UTF-8.
//
// Backpressure: uWS buffers what the kernel did not take; a connection may have at most
// SEND_BUFFER_BYTES waiting (a single frame passes it only when nothing waits). The account channel
// takes events while there is room; the rest stays in the log and the channel waits (hub.ts)
// until uWS says the connection drained to half the bound, then reads on from its last id. A channel
// that waits too long (its client stopped reading), or a frame of another channel or an answer that
// finds no room, closes the connection with WS_CLOSE.behind and the id to resume from (`after=N` in
// the reason: every event up to N was sent before the close frame). uWS's own maxBackpressure sits
// above that bound, so the close frame itself always fits.
//
// A connection without the key on its upgrade is unauthenticated work of its client's address until
// its auth message is answered (limits.ts UNAUTHENTICATED_PER_ADDRESS: one more is refused 429
// before the upgrade), and is closed if that message does not come within AUTH_TIMEOUT_MS.
//
// The parts: ws-protocol.ts (constants, a connection's state), ws-auth.ts (the upgrade and the
// authentication), ws-ops.ts (the client's messages, a handler per op), ws-delivery.ts (frames
// within the send buffer, the channels' streams, the drain); here the connection's open and close.
import type { TemplatedApp, WebSocket } from 'uWebSockets.js';
import { startAuth, upgrade } from './ws-auth.js';
import { drained, end, stopping } from './ws-delivery.js';
import { received } from './ws-ops.js';
import {
  FULL_DETAIL,
  IDLE_TIMEOUT_S,
  MAX_BACKPRESSURE,
  MAX_FRAME_BYTES,
  WS_CLOSE,
  WS_PATH,
  type Conn,
  type WsOptions,
} from './ws-protocol.js';

export {
  MAX_FRAME_BYTES,
  MAX_PAYLOAD_BYTES,
  SEND_BUFFER_BYTES,
  WS_CLOSE,
  WS_PATH,
  type WsOptions,
} from './ws-protocol.js';

/** Registers the WebSocket route on the app (uWS serves upgrades before the route table's GET of the same path). */
export function attachWebSocket(app: TemplatedApp, o: WsOptions): void {
  app.ws<Conn>(WS_PATH, {
    compression: 0, // uWS.DISABLED
    maxPayloadLength: MAX_FRAME_BYTES,
    maxBackpressure: MAX_BACKPRESSURE,
    closeOnBackpressureLimit: 0,
    idleTimeout: IDLE_TIMEOUT_S,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => upgrade(o, res, req, context),
    open: (ws) => opened(o, ws),
    message: (ws, message, isBinary) => received(o, ws.getUserData(), message, isBinary),
    drain: (ws) => drained(o.hub, ws),
    close: (ws) => cleanUp(ws.getUserData()),
  });
}

/** A connection opens holding a stream place of the process (the hub's stop ends it), then authenticates. */
function opened(o: WsOptions, ws: WebSocket<Conn>): void {
  const c = ws.getUserData();
  c.ws = ws;
  c.release = o.hub.hold(() => stopping(c));
  if (!c.release) return end(c, WS_CLOSE.full, FULL_DETAIL);
  startAuth(o, c);
}

/** A connection closed: its channels stop and every place it held is given back. */
function cleanUp(c: Conn): void {
  c.closed = true;
  clearTimeout(c.authTimer);
  c.account?.stop();
  if (c.markets) for (const stop of c.markets.values()) stop();
  c.release?.();
  c.keyPlace?.();
  c.anonymous?.();
  c.pending = undefined;
}
