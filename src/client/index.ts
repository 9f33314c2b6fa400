// The typed client of the API: openapi-fetch over the types generated from the service's OpenAPI
// document (schema.d.ts, `npm run client:generate`). Every path, parameter, body and answer is
// typed; an error answer comes back as `error` (the Problem body), never thrown.
//
//   import { createClient } from './client/index.js';
//   const api = createClient('http://127.0.0.1:8080', process.env.AGENT_MARKET_KEY);
//   const { data } = await api.GET('/api/v1/markets/{market_id}/deals', { params: { path: { market_id: 'h2' } } });
//   const { data: order, error } = await api.POST('/api/v1/orders', { body: { market: 'h2', offer_key: data!.deals[0].key, qty: 1 } });
//   console.log(order?.purchase_url ?? error);   // hand purchase_url to your holder
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type ApiClient = Client<paths>;

/** The default base address: a service started with `npm start` on this machine. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

/**
 * A client of the service at `baseUrl` speaking as the agent whose API key is `key` (sent as
 * `Authorization: Bearer`); without a key only the public operations answer.
 */
export function createClient(
  baseUrl: string = DEFAULT_BASE_URL,
  key?: string,
  init: { fetch?: typeof fetch; headers?: Record<string, string> } = {},
): ApiClient {
  return createFetchClient<paths>({
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: {
      accept: 'application/json',
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...init.headers,
    },
    ...(init.fetch ? { fetch: init.fetch } : {}),
  });
}
