// What the pages of a link (an order's purchase link, a cart's link) share: the token parameter,
// the agent's declared identity as the page shows it, and times in UTC.
import Type from 'typebox';

// A link's token (checkout, cart). Any token is looked up (an indexed miss is cheap): an unknown or
// malformed one is a 404 page, never a 422.
export const TokenParams = Type.Object({ token: Type.String({ minLength: 1 }) });

export type DeclaredAgent = {
  name: string;
  key_id: string;
  identity: Record<string, unknown> | null;
  operator: Record<string, unknown> | null;
  purpose: string | null;
  contact: string | null;
};

const declared = (v: unknown) => (typeof v === 'string' && v ? v : 'not declared');

/** The view of templates/agent-identity.mustache: what the agent declared about itself. */
export function identityView(a: DeclaredAgent) {
  return {
    agent_name: a.name,
    key_id: a.key_id,
    model: declared(a.identity?.model),
    vendor: declared(a.identity?.vendor),
    operator_name: declared(a.operator?.name),
    operator_contact: declared(a.operator?.contact ?? a.contact),
    purpose: declared(a.purpose),
  };
}

export const utc = (unix: number) =>
  `${new Date(unix * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
