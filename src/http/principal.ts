// Who the caller is on each kind of route (Route.auth): what that kind's authenticator proves, so a
// handler's `principal` is typed by its route's auth and no route casts it.

/** An agent, by its API key (`key` routes). */
export type AgentPrincipal = { agentId: number; accountId: number; keyId: string };

/** A signed-in holder, by the session cookie (`holder` routes). */
export type HolderPrincipal = { holderId: number; email: string; displayName: string };

/** How /ops is reached under this configuration (`hidden`: it answers 404). */
export type OpsAccess = 'open' | 'token' | 'hidden';

/** An operator (`ops` routes): on loopback with no token set (`open`), or with the ops token. */
export type OpsPrincipal = { via: OpsAccess };

/** The principal of each auth kind; `none` routes have none. */
export type Principals = {
  none: undefined;
  key: AgentPrincipal;
  holder: HolderPrincipal;
  ops: OpsPrincipal;
};
