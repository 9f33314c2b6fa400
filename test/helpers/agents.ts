// An agent's side of the API for tests: invent and register a key, then speak with it.
import type { TestService } from './service.js';

export type Answer = { status: number; body: any; headers: Headers };

export type TestAgent = {
  key: string;
  agentId: number;
  accountId: number;
  get: (path: string) => Promise<Answer>;
  post: (path: string, body: unknown) => Promise<Answer>;
};

export async function send(
  svc: TestService,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await svc.get(path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export async function registerAgent(
  svc: TestService,
  profile: Record<string, unknown> = {},
): Promise<TestAgent> {
  const key = (await send(svc, 'POST', '/api/v1/agents/token')).body.token as string;
  const reg = await send(svc, 'POST', '/api/v1/agents/register', {
    token: key,
    name: 'Test agent',
    recall_phrase: 'blue heron',
    ...profile,
  });
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
  const auth = { authorization: `Bearer ${key}` };
  return {
    key,
    agentId: reg.body.agent_id,
    accountId: reg.body.account_id,
    get: (path) => send(svc, 'GET', path, undefined, auth),
    post: (path, body) => send(svc, 'POST', path, body, auth),
  };
}

/** An unpaid order of one unit of the first deal on `market`'s current menu (its `order.created` event is one event of the agent's account). */
export async function orderFirstDeal(svc: TestService, agent: TestAgent, market: string) {
  const menu = (await send(svc, 'GET', `/api/v1/markets/${market}/deals`)).body;
  const r = await agent.post('/api/v1/orders', { market, offer_key: menu.deals[0].key, qty: 1 });
  if (r.status !== 201) throw new Error(`order: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Sum of ledger amounts in cents (exact: amounts are served with 2 decimals). */
export const ledgerSumCents = (ledger: { amount: number }[]) =>
  ledger.reduce((s, e) => s + Math.round(e.amount * 100), 0);

export type Menu = { tick: number; closes_at: number; deals: any[] };
/**
 * The current menu of `market` with at least `minLeft` seconds of its session left by the
 * service's clock, so that ordering and paying on it fit before its close (CONTRACT.md "Session
 * boundary": the clock ends a deal, even before the record closes). On a real clock it waits for
 * the next session otherwise; on a clock the test drives (test/helpers/clocked.ts) that would
 * never come, so it refuses: close the session instead.
 */
export async function currentMenu(svc: TestService, market: string, minLeft = 1.5): Promise<Menu> {
  for (;;) {
    const m: Menu = (await send(svc, 'GET', `/api/v1/markets/${market}/deals`)).body;
    const at = svc.services.clock.realNow();
    const left = m.closes_at - at;
    if (left >= minLeft) return m;
    await new Promise((r) => setTimeout(r, Math.max(50, left * 1000 + 100)));
    if (svc.services.clock.realNow() === at)
      throw new Error(
        `${market}: ${left.toFixed(1)} s left on a clock that stands still; close the session instead of waiting`,
      );
  }
}
