// An agent's events (CONTRACT.md "Events"): the REST replay of its account's log. Streams and
// webhooks carry the same events.
import type { Static } from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import type { AgentPrincipal } from '../auth/keys.js';
import { json, route, type Route } from '../route.js';
import { EventsAnswer, EventsQuery } from '../../schemas/index.js';
import type { Services } from '../services.js';
import { eventTypes, gone } from '../event-query.js';

const me = (principal: unknown) => principal as AgentPrincipal;

export function eventRoutes(s: Services): Route[] {
  return [
    route<unknown, Static<typeof EventsQuery>>({
      method: 'GET', path: '/api/v1/events', auth: 'key',
      summary: 'My account\'s events after an id, oldest first (subscribe to /api/v1/events/stream instead of polling)',
      query: EventsQuery,
      response: { 200: EventsAnswer },
      responses: { 410: { description: '`after` is older than the 7 days kept: the detail says from which id events exist' } },
      handler: async ({ query, principal }) => {
        const r = await read(s.runtime, 'events.after', { accountId: me(principal).accountId, after: query.after, limit: query.limit, types: eventTypes(query.types) });
        if ('gone' in r) throw gone(r.from);
        return json(r);
      },
    }),
  ];
}
