// Agents for the bench drivers (bench/orders.mjs, bench/close.mjs): registered through the API with
// keys from the CSPRNG, then the BENCH FIXTURE written directly in the database (not an API path):
// holders, every agent paired with autonomous funding on, every account topped up through a ledger
// row (kind 'topup', ref 'bench:fixture', balance_after_cents), so balance = sum(ledger) holds from
// the start. Earning the switch honestly takes 3 settled profitable trades per agent, which a load
// bench cannot wait for; the order path itself is not bypassed.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** 80 characters of [A-Za-z0-9] from the CSPRNG (rejection sampling: no modulo bias). */
export function newKey() {
  let out = '';
  while (out.length < 80) {
    for (const b of randomBytes(96)) {
      if (b < 248 && out.length < 80) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/**
 * Registers `n` agents (POST /api/v1/agents/register, 16 in flight); returns [{ key, agent_id,
 * account_id }]. `tag` makes recall phrases unique, `model` names the driver, `stop()` ends early.
 */
export async function registerMany(base, n, { tag, model, stop = () => false }) {
  const agents = new Array(n);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= n || stop()) return;
      const key = newKey();
      const body = JSON.stringify({
        token: key,
        name: `bench agent ${i + 1}`,
        recall_phrase: `${tag} ${i + 1}`,
        agent: { kind: 'script', model },
        purpose: `load benchmark (${model})`,
      });
      const r = await fetch(`${base}/api/v1/agents/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await r.text();
      if (r.status !== 201)
        throw new Error(`POST /api/v1/agents/register answered ${r.status}: ${text.slice(0, 300)}`);
      const j = JSON.parse(text);
      agents[i] = { key, agent_id: j.agent_id, account_id: j.account_id };
    }
  };
  await Promise.all(Array.from({ length: Math.min(16, n) }, worker));
  return agents;
}

/**
 * The fixture, in one transaction on client `c`: `holders` holders (emails `<tag>-<n>@bench.invalid`),
 * the agents spread over them, paired, autonomous funding on, accounts topped up by `cents` (a BigInt).
 * Every instant it stores is `at` (unix seconds), passed as a parameter (never the database's now()):
 * by default the machine's clock, which the services under bench run on (real time, whatever
 * SVC_TIME_SCALE does to service time).
 */
export async function fundAgents(
  c,
  agents,
  { holders: holderCount, tag, cents, at = Date.now() / 1000 },
) {
  await c.query('begin');
  try {
    const holders = [];
    for (let h = 0; h < holderCount; h++) {
      const { rows } = await c.query(
        `insert into holder (email, password_hash, display_name, created_at) values ($1, $2, $3, to_timestamp($4::float8)) returning id::float8 as id`,
        [`${tag}-${h + 1}@bench.invalid`, 'bench-fixture:no-login', `bench holder ${h + 1}`, at],
      );
      holders.push(rows[0].id);
    }
    const agentIds = agents.map((a) => a.agent_id);
    const accountIds = agents.map((a) => a.account_id);
    const holderOf = agents.map((_, i) => holders[i % holderCount]);
    const a = await c.query(
      `update agent g set holder_id = x.holder_id, paired_at = to_timestamp($3::float8), autonomous_funding = true, funding_changed_at = to_timestamp($3::float8)
         from unnest($1::bigint[], $2::bigint[]) as x(id, holder_id) where g.id = x.id`,
      [agentIds, holderOf, at],
    );
    const l = await c.query(
      `with u as (update account t set holder_id = x.holder_id, balance_cents = t.balance_cents + $3::bigint
                    from unnest($1::bigint[], $2::bigint[]) as x(id, holder_id) where t.id = x.id
                  returning t.id, t.balance_cents)
       insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at)
       select id, 'topup', $3::bigint, balance_cents, 'bench:fixture', to_timestamp($4::float8) from u`,
      [accountIds, holderOf, cents.toString(), at],
    );
    if (a.rowCount !== agents.length || l.rowCount !== agents.length) {
      throw new Error(
        `fixture touched ${a.rowCount} agents and ${l.rowCount} accounts, expected ${agents.length}`,
      );
    }
    await c.query('commit');
    return { holders: holders.length, agents: a.rowCount, accounts_topped_up: l.rowCount };
  } catch (err) {
    await c.query('rollback').catch(() => {});
    throw err;
  }
}
