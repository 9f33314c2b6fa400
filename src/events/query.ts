// What the event routes share (REST replay, Server-Sent Events, the WebSocket): the `types` filter
// read from a comma-separated list, and the 410 of an `after` older than the log keeps.
import { EVENT_TYPES, type EventType } from '../schemas/index.js';
import { HttpError } from '../http/route.js';

/** `types=a,b` as event types (undefined: every type); an unknown one is a 422 at `types`. */
export function eventTypes(
  types: string | undefined,
  loc: string[] = ['query', 'types'],
): EventType[] | undefined {
  if (types === undefined || types.trim() === '') return undefined;
  const names = [
    ...new Set(
      types
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.filter((n) => !(EVENT_TYPES as string[]).includes(n));
  if (unknown.length) {
    throw new HttpError(422, [
      {
        loc,
        msg: `unknown event type(s) ${unknown.join(', ')}; the types are ${EVENT_TYPES.join(', ')}`,
        type: 'value_error',
      },
    ]);
  }
  return names as EventType[];
}

/** CONTRACT.md "Events": `after` older than what is kept. */
export const goneDetail = (from: number) =>
  `events before id ${from} are no longer kept (7 days): re-read GET /api/v1/orders and GET /api/v1/positions, then resume with after=${from - 1}`;

export const gone = (from: number) => new HttpError(410, goneDetail(from));

/** The longest GET /events/wait holds (seconds): under the usual 30 s of a proxy's or an MCP host's time-out. */
export const WAIT_MAX_S = 25;
