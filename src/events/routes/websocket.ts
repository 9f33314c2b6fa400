// GET /api/v1/ws in the route table: the WebSocket itself is uWS's upgrade handler (src/events/websocket.ts),
// which answers every request that asks to upgrade; what reaches this route is a plain GET, answered
// 426 with how to connect. Declared here so /api/openapi.json lists the WebSocket (its frames are
// CONTRACT.md "Events" and the AsyncAPI document).
import { Media, route, type Reply, type Route } from '../../http/route.js';
import { WS_PATH } from '../websocket.js';

export function wsRoutes(): Route[] {
  return [
    route({
      method: 'GET',
      path: WS_PATH,
      operationId: 'open_websocket',
      auth: 'key',
      summary:
        'My account\'s events and markets\' session closes over a WebSocket: upgrade here (the key in Authorization, or a first message {"op":"auth","key":"..."}), then {"op":"subscribe","channels":["account","market:m15"],"after":N}',
      response: {
        101: new Media(
          'Switching Protocols: a WebSocket of JSON text frames. The server sends {"channel":"account","event":{...}} for each event after `after` (exactly once, in order) and {"channel":"market:m15","event":{"type":"session.closed",...}} at each close; close codes: 4400 bad frame, 4401 unauthorized, 4410 `after` older than kept, 4429 too slow (the reason says after=N to resume), 1001 stopping, 1003 binary, 1009 too big, 1013 full',
          {},
        ),
      },
      responses: {
        426: { description: 'a GET without a WebSocket upgrade' },
        429: {
          description:
            'an upgrade without the key while this address has as many unauthenticated requests and connections as it may: retry after Retry-After, or put the key on the upgrade',
        },
        503: { description: 'this process holds as many streams as it may: retry' },
      },
      handler: () => openWebsocket(),
    }),
  ];
}

/** A plain GET (uWS upgrades the others): 426, with how to connect. */
function openWebsocket(): Reply {
  return {
    status: 426,
    headers: { upgrade: 'websocket' },
    json: {
      detail: `${WS_PATH} is a WebSocket: connect with a WebSocket client (Upgrade: websocket), then send {"op":"subscribe","channels":["account"],"after":0}`,
    },
  };
}
