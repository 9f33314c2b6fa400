// Revoking an agent's key (CONTRACT.md "Spending limits"): the holder ends a key of theirs for good
// from the agents tab. The agent actor's turn marks it revoked and withdraws its unpaid orders; this
// process forgets the key and ends its streams at once, the others on the turn's NOTIFY.
import Type from 'typebox';
import { agentRef, type KeyRevoked } from '../../../actors/agent/messages.js';
import { read } from '../../../actors/runtime/client.js';
import type { HolderPrincipal } from '../../http/authenticators/holder-session.js';
import { heardRevocation } from '../../http/authenticators/agent-key.js';
import { HttpError, route } from '../../http/route.js';
import type { HolderContext, Reply, RequestInfo, Route } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { KeyRevokedForm, rowId } from '../../schemas/index.js';
import { webAction, type Problem } from '../answers.js';
import { consoleReply } from '../console-notice.js';

type AgentsTab = (holder: HolderPrincipal, p?: Problem) => Promise<Reply>;
type Params = { agent_id: number };

export function keyRevokeRoute(s: Services, agentsTab: AgentsTab): Route {
  return route<Params>({
    method: 'POST',
    path: '/console/agents/{agent_id}/revoke',
    auth: 'holder',
    summary:
      "Revoke an agent's key for good: every later request with it answers 401, its streams end and its orders awaiting payment are withdrawn",
    response: { 200: KeyRevokedForm },
    responses: {
      303: { description: 'browsers: back to the agents tab, which says so' },
      404: { description: 'no such agent of yours' },
    },
    params: Type.Object({ agent_id: rowId('the agent') }),
    handler: (c) => revoke(s, agentsTab, c),
    replay: (r: KeyRevoked, { req }) => revokedReply(req, r, s.config.baseUrl),
  });
}

async function revoke(
  s: Services,
  agentsTab: AgentsTab,
  { req, params, principal: holder, idem }: HolderContext<Params>,
): Promise<Reply> {
  return webAction(
    req,
    async () => {
      const [agent] = await read(s.runtime, 'holder.agents', {
        holderId: holder.holderId,
        agentId: params.agent_id,
      });
      if (!agent) throw new HttpError(404, `no agent ${params.agent_id} of yours`);
      const r = await s.runtime.ask(
        agentRef(agent.key_id),
        { kind: 'revoke', holderId: holder.holderId, agentId: agent.id },
        { idem },
      );
      // This process at once; the others when the turn's NOTIFY reaches them.
      heardRevocation(s, `${agent.key_id} ${agent.account_id}`);
      return revokedReply(req, r, s.config.baseUrl);
    },
    (p) => agentsTab(holder, p),
  );
}

function revokedReply(req: RequestInfo, r: KeyRevoked, baseUrl: string): Reply {
  return consoleReply(
    req,
    '/console/agents',
    r,
    { kind: 'key_revoked', agent_id: r.agent_id, withdrawn: r.withdrawn_order_ids.length },
    baseUrl,
  );
}
