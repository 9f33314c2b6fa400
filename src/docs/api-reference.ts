// /docs/developers' route reference, read off the OpenAPI document (the one /api/openapi.json
// serves), so the page lists exactly the routes, parameters, defaults and answers the server
// validates with. Pure functions over the document.

type Schema = Record<string, any>;
type Parameter = {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Schema;
};
type Operation = {
  tags?: string[];
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string }>;
  security?: Record<string, unknown>[];
};
export type OpenApiDoc = {
  tags?: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

export type ParamView = {
  name: string;
  where: string;
  required: boolean;
  type: string;
  default: string;
  description: string;
};
export type OperationView = {
  anchor: string;
  method: string;
  path: string;
  summary: string;
  auth: string;
  params: ParamView[];
  has_params: boolean;
  body: { required: boolean; fields: ParamView[] } | null;
  responses: { status: string; description: string }[];
  idempotent: boolean;
};
/** `label`: the section's accessible name (a resource may sit under two tags: agents/protocol is discovery's). */
export type GroupView = { id: string; title: string; label: string; operations: OperationView[] };
export type TagView = { name: string; description: string; groups: GroupView[]; count: number };

export const IDEMPOTENCY_HEADER_NAME = 'Idempotency-Key';
const METHODS = ['get', 'post', 'put', 'delete'];

/** The schema a `$ref` names, else the schema itself. */
function resolve(doc: OpenApiDoc, s: Schema | undefined): Schema {
  if (s && typeof s.$ref === 'string')
    return doc.components?.schemas?.[s.$ref.split('/').pop()!] ?? {};
  return s ?? {};
}

/** A schema in a few words: its type, allowed values and bounds. */
export function typeWords(doc: OpenApiDoc, raw: Schema | undefined): string {
  const s = resolve(doc, raw);
  const ref = raw && typeof raw.$ref === 'string' ? raw.$ref.split('/').pop() : undefined;
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alts) {
    if (alts.every((a) => 'const' in a))
      return alts.map((a) => JSON.stringify(a.const)).join(' | ');
    return alts.map((a) => typeWords(doc, a)).join(' | ');
  }
  if ('const' in s) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  let t =
    ref ?? (Array.isArray(s.type) ? s.type.join(' | ') : ((s.type as string | undefined) ?? 'any'));
  if (s.type === 'array') t = `array of ${typeWords(doc, s.items)}`;
  const bounds: string[] = [];
  const lo = s.minimum ?? s.minLength ?? s.minItems;
  const hi = s.maximum ?? s.maxLength ?? s.maxItems;
  if (s.exclusiveMinimum !== undefined) bounds.push(`> ${s.exclusiveMinimum}`);
  if (lo !== undefined && lo === hi) bounds.push(`exactly ${lo}`);
  else if (lo !== undefined && hi !== undefined) bounds.push(`${lo}..${hi}`);
  else if (lo !== undefined) bounds.push(`>= ${lo}`);
  else if (hi !== undefined) bounds.push(`<= ${hi}`);
  if (s.exclusiveMaximum !== undefined) bounds.push(`< ${s.exclusiveMaximum}`);
  return bounds.length ? `${t} ${bounds.join(', ')}` : t;
}

const defaultWords = (doc: OpenApiDoc, s: Schema | undefined) => {
  const r = resolve(doc, s);
  return 'default' in r ? JSON.stringify(r.default) : '';
};

function paramView(doc: OpenApiDoc, p: Parameter): ParamView {
  const s = resolve(doc, p.schema);
  return {
    name: p.name,
    where: p.in,
    required: !!p.required,
    type: typeWords(doc, p.schema),
    default: defaultWords(doc, p.schema),
    description: p.description ?? (s.description as string | undefined) ?? '',
  };
}

/** The top-level fields of a JSON request body. */
function bodyFields(doc: OpenApiDoc, raw: Schema | undefined): ParamView[] {
  const s = resolve(doc, raw);
  const required = new Set<string>(s.required ?? []);
  return Object.entries((s.properties ?? {}) as Record<string, Schema>).map(([name, p]) => ({
    name,
    where: 'body',
    required: required.has(name),
    type: typeWords(doc, p),
    default: defaultWords(doc, p),
    description: (resolve(doc, p).description as string | undefined) ?? '',
  }));
}

/** Who may call: nobody needed, an agent's key, or a holder's session. */
function authWords(op: Operation): string {
  if (!op.security) return 'holder session (web login)';
  if (op.security.length === 0) return 'public';
  return 'API key (Authorization: Bearer, or X-API-Token)';
}

/** `/api/v1/markets/{market_id}/history` → `markets`: the resource a route belongs to. */
export function resourceOf(path: string): string {
  const parts = path.split('/').filter(Boolean);
  const i = parts[0] === 'api' && /^v\d+$/.test(parts[1] ?? '') ? 2 : parts[0] === 'api' ? 1 : 0;
  return parts[i] ?? '/';
}

export function operations(doc: OpenApiDoc): (Operation & { method: string; path: string })[] {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    METHODS.filter((m) => ops[m]).map((m) => ({ ...ops[m], method: m.toUpperCase(), path })),
  );
}

function operationView(
  doc: OpenApiDoc,
  op: Operation & { method: string; path: string },
): OperationView {
  const all = op.parameters ?? [];
  const params = all.filter((p) => p.in !== 'header').map((p) => paramView(doc, p));
  const body = op.requestBody?.content?.['application/json'];
  return {
    anchor: op.operationId,
    method: op.method,
    path: op.path,
    summary: op.summary ?? '',
    auth: authWords(op),
    params,
    has_params: params.length > 0,
    body: body
      ? { required: !!op.requestBody!.required, fields: bodyFields(doc, body.schema) }
      : null,
    responses: Object.entries(op.responses ?? {}).map(([status, r]) => ({
      status,
      description: r.description ?? '',
    })),
    idempotent: all.some((p) => p.in === 'header' && p.name === IDEMPOTENCY_HEADER_NAME),
  };
}

/** The document's operations grouped by tag, then by resource, in the document's order. */
export function referenceByTag(doc: OpenApiDoc): TagView[] {
  const ops = operations(doc);
  const tagNames = [
    ...new Set([...(doc.tags ?? []).map((t) => t.name), ...ops.flatMap((o) => o.tags ?? [])]),
  ];
  return tagNames
    .map((name) => {
      const groups = new Map<string, GroupView>();
      for (const op of ops.filter((o) => (o.tags ?? []).includes(name))) {
        const id = resourceOf(op.path);
        let g = groups.get(id);
        if (!g)
          groups.set(
            id,
            (g = {
              id: `${name}-${id}`.replace(/[^A-Za-z0-9-]/g, '-'),
              title: id,
              label: `${id} (${name})`,
              operations: [],
            }),
          );
        g.operations.push(operationView(doc, op));
      }
      const list = [...groups.values()];
      return {
        name,
        description: doc.tags?.find((t) => t.name === name)?.description ?? '',
        groups: list,
        count: list.reduce((n, g) => n + g.operations.length, 0),
      };
    })
    .filter((t) => t.count > 0);
}

/** The operations that take an Idempotency-Key, and the header's own description. */
export function idempotentOperations(doc: OpenApiDoc): {
  description: string;
  operations: { method: string; path: string; anchor: string }[];
} {
  const ops = operations(doc);
  const header = ops
    .flatMap((o) => o.parameters ?? [])
    .find((p) => p.in === 'header' && p.name === IDEMPOTENCY_HEADER_NAME);
  return {
    description: header?.description ?? '',
    operations: ops
      .filter((o) =>
        (o.parameters ?? []).some((p) => p.in === 'header' && p.name === IDEMPOTENCY_HEADER_NAME),
      )
      .map((o) => ({ method: o.method, path: o.path, anchor: o.operationId })),
  };
}

/** Every status the document declares, with how many operations declare it and one of their words. */
export function statusesDeclared(
  doc: OpenApiDoc,
): { status: string; count: number; example: string }[] {
  const by = new Map<string, { count: number; example: string }>();
  for (const op of operations(doc)) {
    for (const [status, r] of Object.entries(op.responses ?? {})) {
      if (Number(status) < 400) continue;
      const e = by.get(status) ?? { count: 0, example: r.description ?? '' };
      e.count++;
      by.set(status, e);
    }
  }
  return [...by.entries()]
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([status, e]) => ({ status, ...e }));
}
