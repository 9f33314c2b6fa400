// /api/openapi.json, generated from the same route table the server validates with, so the
// document cannot drift from behaviour. TypeBox schemas are JSON Schema already (OpenAPI 3.1 uses
// JSON Schema 2020-12), they only need TypeBox's internal `~kind`-style markers removed.
import { API_TAGS, apiTag } from './tags.js';
import type { TSchema } from 'typebox';
import { Media, type Route } from '../http/route.js';
import { NAMED_SCHEMAS, Problem } from '../schemas/index.js';
import { SERVICE_NAME } from '../docs/manifest.js';

export type OpenApiInfo = {
  title: string;
  version: string;
  description?: string;
  serverUrl: string;
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: unknown) => ({ 'application/json': { schema } });
/** Every error answer (4xx, 5xx) has the one Problem body. */
const problem = (description: string) => ({ description, content: jsonContent(Problem) });

const securitySchemes = {
  bearer: { type: 'http', scheme: 'bearer' },
  apiToken: { type: 'apiKey', in: 'header', name: 'X-API-Token' },
};

/** Routes listed in the document: an explicit `api` flag wins, otherwise everything under /api/. */
export function isApiRoute(r: Route): boolean {
  return r.api ?? r.path.startsWith('/api/');
}

/**
 * The document of the API routes. A schema of `named` met anywhere (by identity) is written once
 * under components/schemas and referred to; the others are written inline where they occur.
 */
export function buildOpenApi(
  routes: Route[],
  info: OpenApiInfo,
  named: Record<string, TSchema> = NAMED_SCHEMAS,
): object {
  const paths: Record<string, Record<string, unknown>> = {};
  checkOperationIds(routes);
  for (const r of routes.filter(isApiRoute)) {
    (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r, r.operationId!);
  }
  const names = new Map<unknown, string>(Object.entries(named).map(([n, s]) => [s, n]));
  const used = new Set<string>();
  const plainPaths = plain(paths, names, used);
  // Components refer to each other too: write them until no new name turns up.
  const schemas: Record<string, unknown> = {};
  for (let todo = [...used]; todo.length; todo = [...used].filter((n) => !(n in schemas))) {
    for (const n of todo) schemas[n] = plain(named[n], names, used, named[n]);
  }
  const sorted = Object.fromEntries(
    Object.keys(schemas)
      .sort()
      .map((n) => [n, schemas[n]]),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description ? { description: info.description } : {}),
    },
    servers: [{ url: info.serverUrl }],
    tags: API_TAGS.map((t) => ({ name: t.name, description: t.description })),
    paths: plainPaths,
    components: { schemas: sorted, securitySchemes },
  };
}

/** Routes whose effect stores its answer (those with a `replay`) take CONTRACT.md's retry key. */
const IDEMPOTENCY_PARAM = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Retry safely: a repeat with the same key and body gets the first answer again (Idempotent-Replayed: true) for 24 hours',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

function operation(r: Route, operationId: string): Record<string, unknown> {
  const op: Record<string, unknown> = { tags: [apiTag(r.path)], operationId, summary: r.summary };
  const parameters = [
    ...params('path', r.params),
    ...undeclaredPathParams(r),
    ...params('query', r.query),
    ...(r.replay ? [IDEMPOTENCY_PARAM] : []),
  ];
  if (parameters.length) op.parameters = parameters;
  if (r.body) op.requestBody = { required: !r.optionalBody, content: jsonContent(r.body) };

  const responses: Record<string, unknown> = {};
  for (const [status, body] of Object.entries(r.response ?? {})) responses[status] = success(body);
  for (const [status, doc] of Object.entries(r.responses ?? {})) {
    responses[status] =
      Number(status) >= 400 ? problem(doc.description) : { description: doc.description };
  }
  if (r.auth === 'key') {
    responses['401'] ??= problem('Missing or invalid API token, or one revoked by its holder');
    op.security = [{ bearer: [] }, { apiToken: [] }];
  } else if (r.auth === 'none') {
    op.security = []; // public: no credentials
  }
  if (r.replay) {
    responses['400'] ??= problem('Idempotency-Key malformed, or reused with another body');
    responses['409'] ??= problem('a request with this Idempotency-Key is still in progress');
  }
  if (r.params || r.query || r.body) {
    responses['422'] = problem('Validation Error');
  }
  op.responses = responses;
  return op;
}

/** A success answer: JSON of a schema, or the media types of a Media. */
function success(body: TSchema | Media): object {
  if (body instanceof Media) {
    const content = Object.fromEntries(
      Object.entries(body.content).map(([type, schema]) => [type, schema ? { schema } : {}]),
    );
    return { description: body.description, content };
  }
  return {
    description: (body as { description?: string }).description ?? 'OK',
    content: jsonContent(body),
  };
}

function params(where: 'path' | 'query', schema: TSchema | undefined): object[] {
  const s = schema as { properties?: Record<string, any>; required?: string[] } | undefined;
  if (!s?.properties) return [];
  return Object.entries(s.properties).map(([name, p]) => ({
    name,
    in: where,
    required: where === 'path' || ((s.required ?? []).includes(name) && !('default' in p)),
    ...(typeof p.description === 'string' ? { description: p.description } : {}),
    schema: p,
  }));
}

/** OpenAPI requires every `{name}` in a path to be a declared parameter; default to a string. */
function undeclaredPathParams(r: Route): object[] {
  const declared = (r.params as { properties?: object } | undefined)?.properties ?? {};
  return [...r.path.matchAll(/\{([^}]+)\}/g)]
    .map((m) => m[1])
    .filter((name) => !(name in declared))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
}

/** An operationId: snake_case, a verb first (`list_deals`, `get_order`, `add_cart_item`). */
export const OPERATION_ID = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

/**
 * Every route the document lists declares its `operationId` (the name of its operation, MCP tool
 * and client function), snake_case and unique in the table; otherwise this throws, which stops the
 * start (routeTable calls it) and fails the unit test. Ids are never derived: renaming one is a
 * breaking change for clients and agents, so it is written where the route is.
 */
export function checkOperationIds(routes: Route[]): void {
  const seen = new Map<string, string>();
  for (const r of routes) {
    const at = `${r.method} ${r.path}`;
    if (r.operationId === undefined) {
      if (isApiRoute(r))
        throw new Error(
          `route ${at} has no operationId: declare one (snake_case, verb first, e.g. list_deals) in its route({...})`,
        );
      continue;
    }
    if (!OPERATION_ID.test(r.operationId))
      throw new Error(
        `route ${at}: operationId ${JSON.stringify(r.operationId)} is not snake_case (verb_noun, e.g. get_order)`,
      );
    const other = seen.get(r.operationId);
    if (other)
      throw new Error(`operationId ${r.operationId} is declared twice: ${other} and ${at}`);
    seen.set(r.operationId, at);
  }
}

/**
 * A TypeBox schema as plain JSON Schema standing alone (an MCP tool's input or output schema): the
 * schemas of `named` met inside are written once under `$defs` and referred to.
 */
export function standaloneSchema(
  schema: TSchema | object,
  named: Record<string, TSchema> = NAMED_SCHEMAS,
): Record<string, unknown> {
  const names = new Map<unknown, string>(Object.entries(named).map(([n, s]) => [s, n]));
  const used = new Set<string>();
  const out = plain(schema, names, used, schema, defRef) as Record<string, unknown>;
  const defs: Record<string, unknown> = {};
  for (let todo = [...used]; todo.length; todo = [...used].filter((n) => !(n in defs))) {
    for (const n of todo) defs[n] = plain(named[n], names, used, named[n], defRef);
  }
  return Object.keys(defs).length
    ? {
        ...out,
        $defs: Object.fromEntries(
          Object.keys(defs)
            .sort()
            .map((n) => [n, defs[n]]),
        ),
      }
    : out;
}
const defRef = (name: string) => ({ $ref: `#/$defs/${name}` });

/**
 * A plain-JSON copy: drops TypeBox markers (`~kind`, `~optional`... only present if made
 * enumerable), symbol keys, functions (e.g. a function `default`) and undefined values; a named
 * schema other than `root` becomes a $ref (its name noted in `used`).
 */
function plain(
  v: unknown,
  names: Map<unknown, string>,
  used: Set<string>,
  root?: unknown,
  refer: (name: string) => object = ref,
): unknown {
  if (v !== root && names.has(v)) {
    const n = names.get(v)!;
    used.add(n);
    return refer(n);
  }
  if (Array.isArray(v)) return v.map((x) => plain(x, names, used, root, refer));
  if (v instanceof RegExp) return v.source;
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('~') || x === undefined || typeof x === 'function') continue;
    out[k] = plain(x, names, used, root, refer);
  }
  return out;
}

/** The OpenAPI document of the finished route table: /api/openapi.json serves it, /docs/developers renders it. */
export function openApiDocument(routes: Route[], baseUrl: string): object {
  return buildOpenApi(routes, {
    title: SERVICE_NAME,
    version: '1.0.0',
    description:
      'Markets, the public record, agents, orders and accounts. Errors are {"detail": ...} (the Problem schema).',
    serverUrl: baseUrl,
  });
}
