// /api/openapi.json, generated from the same route table the server validates with, so the
// document cannot drift from behaviour. TypeBox schemas are JSON Schema already (OpenAPI 3.1 uses
// JSON Schema 2020-12), they only need TypeBox's internal `~kind`-style markers removed.
import type { TSchema } from 'typebox';
import type { Route } from './route.js';

export type OpenApiInfo = { title: string; version: string; description?: string; serverUrl: string };

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const jsonContent = (schema: unknown) => ({ 'application/json': { schema } });

const components = {
  schemas: {
    HTTPError: {
      type: 'object',
      required: ['detail'],
      properties: { detail: { type: 'string' } },
    },
    ValidationError: {
      type: 'object',
      required: ['detail'],
      properties: {
        detail: {
          type: 'array',
          items: {
            type: 'object',
            required: ['loc', 'msg', 'type'],
            properties: {
              loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
              msg: { type: 'string' },
              type: { type: 'string' },
              input: {},
              ctx: { type: 'object' },
            },
          },
        },
      },
    },
  },
  securitySchemes: {
    bearer: { type: 'http', scheme: 'bearer' },
    apiToken: { type: 'apiKey', in: 'header', name: 'X-API-Token' },
  },
};

/** Routes listed in the document: an explicit `api` flag wins, otherwise everything under /api/. */
export function isApiRoute(r: Route): boolean {
  return r.api ?? r.path.startsWith('/api/');
}

export function buildOpenApi(routes: Route[], info: OpenApiInfo): object {
  const paths: Record<string, Record<string, unknown>> = {};
  const usedIds = new Set<string>();
  for (const r of routes.filter(isApiRoute)) {
    (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r, operationId(r, usedIds));
  }
  const doc = {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, ...(info.description ? { description: info.description } : {}) },
    servers: [{ url: info.serverUrl }],
    tags: [{ name: 'v1' }],
    paths,
    components,
  };
  return plain(doc) as object;
}

/** Routes whose effect stores its answer (those with a `replay`) take CONTRACT.md's retry key. */
const IDEMPOTENCY_PARAM = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Retry safely: a repeat with the same key and body gets the first answer again (Idempotent-Replayed: true) for 24 hours',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

function operation(r: Route, operationId: string): Record<string, unknown> {
  const op: Record<string, unknown> = { tags: ['v1'], operationId, summary: r.summary };
  const parameters = [...params('path', r.params), ...undeclaredPathParams(r), ...params('query', r.query), ...(r.replay ? [IDEMPOTENCY_PARAM] : [])];
  if (parameters.length) op.parameters = parameters;
  if (r.body) op.requestBody = { required: true, content: jsonContent(r.body) };

  const declared: Record<string, { description: string; schema?: TSchema; contentType?: string }> = { ...r.responses };
  if (!Object.keys(declared).some((s) => Number(s) < 400)) declared[200] = { description: 'OK' };
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(declared)) {
    // A declared error answer without its own schema carries the standard `{detail}` body.
    const schema = doc.schema ?? (Number(status) >= 400 ? ref('HTTPError') : undefined);
    const content = schema ? { [doc.contentType ?? 'application/json']: { schema } } : doc.contentType ? { [doc.contentType]: {} } : undefined;
    responses[status] = { description: doc.description, ...(content ? { content } : {}) };
  }
  if (r.auth === 'key') {
    responses['401'] ??= { description: 'Missing or invalid API token', content: jsonContent(ref('HTTPError')) };
    op.security = [{ bearer: [] }, { apiToken: [] }];
  }
  if (r.replay) {
    responses['400'] ??= { description: 'Idempotency-Key malformed, or reused with another body', content: jsonContent(ref('HTTPError')) };
    responses['409'] ??= { description: 'a request with this Idempotency-Key is still in progress', content: jsonContent(ref('HTTPError')) };
  }
  if (r.params || r.query || r.body) {
    responses['422'] = { description: 'Validation Error', content: jsonContent(ref('ValidationError')) };
  }
  op.responses = responses;
  return op;
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

/** `GET /api/v1/markets/{market_id}` → `get_api_v1_markets_market_id`; a clash gets `_2`, `_3`... */
function operationId(r: Route, used: Set<string>): string {
  const base = [r.method.toLowerCase(), ...r.path.split(/[^A-Za-z0-9]+/).filter(Boolean)].join('_');
  let id = base;
  for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
  used.add(id);
  return id;
}

/**
 * A plain-JSON copy: drops TypeBox markers (`~kind`, `~optional`... only present if made
 * enumerable), symbol keys, functions (e.g. a function `default`) and undefined values.
 */
function plain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof RegExp) return v.source;
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('~') || x === undefined || typeof x === 'function') continue;
    out[k] = plain(x);
  }
  return out;
}
