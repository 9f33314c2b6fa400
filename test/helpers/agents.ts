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

export async function send(svc: TestService, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await svc.get(path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export async function registerAgent(svc: TestService, profile: Record<string, unknown> = {}): Promise<TestAgent> {
  const key = (await send(svc, 'POST', '/api/v1/agents/token')).body.token as string;
  const reg = await send(svc, 'POST', '/api/v1/agents/register', { token: key, name: 'Test agent', recall_phrase: 'blue heron', ...profile });
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

/** Sum of ledger amounts in cents (exact: amounts are served with 2 decimals). */
export const ledgerSumCents = (ledger: { amount: number }[]) => ledger.reduce((s, e) => s + Math.round(e.amount * 100), 0);
