// Building blocks of the served objects' schemas. Every served object is closed
// (`additionalProperties: false`): a field its schema does not describe fails the response check
// (SVC_RESPONSE_CHECKS) instead of shipping undocumented. Every field carries a description, which
// /api/openapi.json shows.
import Type, { type TProperties, type TSchema } from 'typebox';

/** A served object: closed, described. */
export const obj = <P extends TProperties>(properties: P, description: string) =>
  Type.Object(properties, { description, additionalProperties: false });
/**
 * An API request body (CONTRACT.md "Strict requests"): closed, so a property the route does not
 * declare is a 422 `extra_forbidden` at its name, never silently dropped (`"quantity": 3` once
 * placed an order of another quantity).
 */
export const requestBody = <P extends TProperties>(
  properties: P,
  options: { description?: string } = {},
) => Type.Object(properties, { ...options, additionalProperties: false });
/** The schema keyword (an OpenAPI extension) that bounds a number's decimal places; src/http/validation.ts enforces it. */
export const DECIMAL_PLACES = 'x-decimal-places';
/**
 * An amount a caller names (USD or Gold Coins, form or JSON): at most 2 decimals (CONTRACT.md
 * "Strict requests"), else a 422 at the field; never rounded into another amount.
 */
export const amount = (
  description: string,
  bounds: { exclusiveMinimum?: number; minimum?: number; maximum?: number },
) => Type.Number({ ...bounds, description, [DECIMAL_PLACES]: 2 });
export const str = (description: string) => Type.String({ description });
export const int = (description: string) => Type.Integer({ description });
export const num = (description: string) => Type.Number({ description });
export const bool = (description: string) => Type.Boolean({ description });
/** A row id a caller names (path, query or form): positive, and a bigint the database can take. */
export const rowId = (description: string) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });
export const list = <T extends TSchema>(items: T, description: string) =>
  Type.Array(items, { description });
/** A value or null; the description sits on the union, where documentation tools look. */
export const nullable = <T extends TSchema>(s: T, description: string) =>
  Type.Union([s, Type.Null()], { description });
export const numOrNull = (description: string) => nullable(Type.Number(), description);
export const intOrNull = (description: string) => nullable(Type.Integer(), description);
export const strOrNull = (description: string) => nullable(Type.String(), description);
export const oneOf = <const V extends string>(values: readonly V[], description: string) =>
  values.length === 1
    ? Type.Literal(values[0], { description })
    : Type.Union(
        values.map((v) => Type.Literal(v)),
        { description },
      );
/** An object keyed by free names (clusters, markets), every value of one schema. */
export const keyed = <T extends TSchema>(value: T, description: string) =>
  Type.Record(Type.String(), value, { description });
/** Unix seconds (real clock), possibly fractional. */
export const unixOrNull = (description: string) =>
  numOrNull(`${description} (unix seconds), null until it happens`);

/** Fields named by a list of the domain (tape columns, quote fields), each made by `make`. */
export const fields = <S extends TSchema>(
  names: readonly string[],
  make: (name: string) => S,
): Record<string, S> => Object.fromEntries(names.map((n) => [n, make(n)]));

export const MONEY = 'USD';

/** CONTRACT.md "Strict requests": the manifest and GET /markets say how fast the service clock runs. */
export const TIME_SCALE =
  'SVC_TIME_SCALE in force: the service clock runs this many times faster than real time (a session lasts interval_seconds / time_scale real seconds); every instant served is real unix seconds';

/** One entry of a 422 answer (pydantic v2 style, CONTRACT.md "Errors"). */
export const ValidationIssue = obj(
  {
    loc: list(
      Type.Union([Type.String(), Type.Integer()]),
      'where: "path", "query" or "body", then the field names and indexes',
    ),
    msg: str('what is wrong, for a person'),
    type: str('a stable code of the failure (missing, int_parsing, less_than_equal, ...)'),
    input: Type.Optional(Type.Unknown({ description: 'the offending value, when there is one' })),
    ctx: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'the constraint that failed (e.g. {"le": 20})',
      }),
    ),
  },
  'one offending field',
);

/** Every error answer (4xx and 5xx): one sentence, or the field issues of a 422. */
export const Problem = obj(
  {
    detail: Type.Union([Type.String(), Type.Array(ValidationIssue)], {
      description: 'what went wrong: a sentence, or (422) one entry per offending field',
    }),
  },
  'an error answer',
);
