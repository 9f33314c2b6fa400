// An agent on a child-process service (test/helpers/child-service.ts), and orders it places in the
// open session of a market: what the multi-process event tests (SSE and WebSocket) share.
import type { ChildService } from './child-service.js';

/** The service settings of a multi-process events test: service time 1000 times slower, so the open h10 session stays open. */
export const slowTimeEnv = (url: string) => ({
  DATABASE_URL: url,
  SVC_SHARDS: '1',
  SVC_BACKFILL_DAYS: '0',
  SVC_TIME_SCALE: '0.001',
});

export async function agentOn(
  svc: ChildService,
): Promise<{ key: string; auth: Record<string, string> }> {
  const key = (await svc.send('POST', '/api/v1/agents/token')).body.token;
  const reg = await svc.send('POST', '/api/v1/agents/register', {
    token: key,
    name: 'Two-process agent',
    recall_phrase: 'blue heron',
  });
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
  return { key, auth: { authorization: `Bearer ${key}` } };
}

/** Places `n` orders of `market`'s open menu through `svc` (one after another); returns their ids. */
export async function ordersOn(
  svc: ChildService,
  auth: Record<string, string>,
  market: string,
  n: number,
): Promise<number[]> {
  const deals = (await svc.send('GET', `/api/v1/markets/${market}/deals`)).body.deals;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await svc.send(
      'POST',
      '/api/v1/orders',
      { market, offer_key: deals[i % deals.length].key, qty: 1 },
      auth,
    );
    if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
    ids.push(r.body.id);
  }
  return ids;
}
