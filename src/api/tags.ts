// The API's operations grouped by what they serve: the OpenAPI document's tags, and what an MCP host
// filters its tools by (POST /mcp?tags=markets,trading; CONTRACT.md "MCP"). One table: an operation's
// tag is the first whose pattern matches its path.
export const API_TAGS = [
  {
    name: 'discovery',
    description:
      'What the service is: the manifest, the agent protocol, the catalog, payment methods',
    match: /^\/api\/v1\/(manifest|catalog|payments|agents\/protocol)\b/,
  },
  {
    name: 'agents',
    description: 'Keys, registration and the agent itself',
    match: /^\/api\/v1\/agents\b/,
  },
  {
    name: 'record',
    description: "The public record of the markets' past sessions",
    match:
      /^\/api\/v1\/(pulse|markets\/[^/]+\/(history|trades|coverage|dataset\.csv|stats|tape|book|families))\b/,
  },
  {
    name: 'markets',
    description:
      'The markets, their open sessions, the current menus and projections of their deals',
    match: /^\/api\/v1\/(markets|ticker)\b/,
  },
  {
    name: 'trading',
    description: 'Orders and quotes, positions, trades, the account, its goods and rounds',
    match: /^\/api\/v1\/(orders|positions|trades|account|inventory|rounds)\b/,
  },
  {
    name: 'carts',
    description: 'Carts and their lines, links and checkouts',
    match: /^\/api\/v1\/carts?\b/,
  },
  {
    name: 'events',
    description: "The account's events: the log, its stream, waiting for the next, the WebSocket",
    match: /^\/api\/v1\/(events|ws)\b/,
  },
  {
    name: 'webhooks',
    description: 'Webhooks and their deliveries',
    match: /^\/api\/v1\/webhooks\b/,
  },
  {
    name: 'exchange',
    description: 'Owned goods offered to other holders',
    match: /^\/api\/v1\/exchange\b/,
  },
  { name: 'competitions', description: 'Competitions', match: /^\/api\/v1\/competitions\b/ },
  {
    name: 'receipts',
    description: 'Signed approval receipts and the keys that verify them',
    match: /^\/(\.well-known\/jwks\.json|api\/v1\/receipts)\b/,
  },
  { name: 'service', description: 'The service itself: health and the rest', match: /^\// },
] as const;

export type ApiTag = (typeof API_TAGS)[number]['name'];
export const API_TAG_NAMES: readonly ApiTag[] = API_TAGS.map((t) => t.name);

/** An operation's tag, by its path (the last, `service`, takes what no other does). */
export function apiTag(path: string): ApiTag {
  return API_TAGS.find((t) => t.match.test(path))!.name;
}
