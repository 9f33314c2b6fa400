// A funded agent of a holder: the fixture the limits and revocation tests start from.
import { instantSql } from '../../actors/runtime/sql.js';
import { registerAgent, type TestAgent } from './agents.js';
import type { TestHolder } from './holders.js';
import type { TestService } from './service.js';

/**
 * A new agent of `holder` that may fund orders from its balance of 10 000 USD. The fixture (earning
 * the switch takes 3 settled profitable trades, which trading.test.ts covers): the agent is the
 * holder's, its switch on, its account topped up through a ledger row.
 */
export async function fundedAgent(svc: TestService, holder: TestHolder): Promise<TestAgent> {
  const q = (sql: string, p: unknown[] = []) => svc.orm.em.fork().execute(sql, p);
  const agent = await registerAgent(svc);
  const balance = 1_000_000;
  await q(
    'update agent set holder_id = (select id from holder where email = ?), autonomous_funding = true where id = ?',
    [holder.email, agent.agentId],
  );
  await q(
    'update account set holder_id = (select id from holder where email = ?), balance_cents = ? where id = ?',
    [holder.email, balance, agent.accountId],
  );
  await q(
    `insert into ledger (account_id, kind, amount_cents, balance_after_cents, ref, created_at) values (?, 'topup', ?, ?, 'test:fixture', ${instantSql()})`,
    [agent.accountId, balance, balance, svc.services.clock.realNow()],
  );
  return agent;
}
