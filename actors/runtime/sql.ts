// Small SQL helpers every actor's set-based SQL shares, defined once: bulk rows travel as one JSON
// parameter (expanded by jsonb_to_recordset) or as one array per column (unnest), id lists as one
// array, and a lost unique race is recognised by its SQLSTATE.

/** SQLSTATE of a unique violation: a twin (another process, a concurrent turn) wrote the key first. */
export const UNIQUE_VIOLATION = '23505';

/** Whether `err` is PostgreSQL's unique violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === UNIQUE_VIOLATION;
}

/** Rows as one JSON parameter, for `jsonb_to_recordset(?::jsonb)`. */
export function jsonParam(rows: unknown): string {
  return JSON.stringify(rows);
}

function assertIntegers(xs: readonly number[]): void {
  for (const x of xs) if (!Number.isSafeInteger(x)) throw new Error(`not an integer id: ${x}`);
}

/** Integers as one array parameter, for `any(?::bigint[])` or `unnest(?::int[])` (`{1,2,3}`). */
export function intArrayParam(xs: readonly number[]): string {
  assertIntegers(xs);
  return `{${xs.join(',')}}`;
}

/**
 * Distinct ids as an inline `bigint[]` literal, for SQL sent without parameters (the order batch's
 * simple protocol). Each is asserted a safe integer, so the literal needs no escaping.
 */
export function bigintArrayLiteral(xs: readonly number[]): string {
  return `'${intArrayParam([...new Set(xs)])}'::bigint[]`;
}

/**
 * Values as one PostgreSQL array literal (`{"a","b",NULL}`), quoted with `lit` (the driver's
 * escapeLiteral), for statements sent without parameters (the order batch's EXECUTEs): every
 * element is double-quoted with its `"` and `\` escaped; numbers must be finite.
 */
export function arrayLiteral(
  values: readonly (string | number | boolean | null)[],
  lit: (s: string) => string,
): string {
  const items = values.map((v) => {
    if (v === null) return 'NULL';
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw new Error(`not a finite number: ${v}`);
      return String(v);
    }
    if (typeof v === 'boolean') return v ? 't' : 'f';
    return `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  });
  return lit(`{${items.join(',')}}`);
}

/**
 * Values as one array parameter (`?::text[]`, `?::boolean[]`, `unnest(...)`): the array literal
 * `arrayLiteral` makes, sent as a bound value (the driver quotes it).
 */
export function arrayParam(values: readonly (string | number | boolean | null)[]): string {
  return arrayLiteral(values, (s) => s);
}

/**
 * Whether a link token (purchase link, cart link) can be one the service made (base64url or hex,
 * bounded): anything else, a NUL character included, which PostgreSQL refuses in text, is simply
 * not found, without a query.
 */
export const isLinkToken = (token: string): boolean => /^[A-Za-z0-9_-]{1,128}$/.test(token);

/**
 * Cents as a served amount (USD, a JSON number), in SQL: float8 division gives the very double
 * centsToNumber gives in JavaScript (both divisions are correctly rounded), printed shortest.
 */
export const usdSql = (cents: string) => `(${cents})::float8 / 100`;

/**
 * An instant as SQL receives it (ARCHITECTURE rule 7): unix seconds from the service's Clock (a
 * turn's TurnContext.at) bound to `param`. The only way a stored or compared instant reaches SQL:
 * the database server's own clock is never read (test/unit/no-database-clock.test.ts).
 */
export const instantSql = (param = '?') => `to_timestamp(${param}::float8)`;

/** An instant (unix seconds, a turn's TurnContext.at) as the EntityManager stores it. */
export const instantDate = (at: number): Date => new Date(at * 1000);

/** A timestamp as served: unix seconds with milliseconds (a JSON number), in SQL. */
export const unixSql = (at: string) => `floor(extract(epoch from ${at}) * 1000)::float8 / 1000`;

/** An object's keys and the SQL of their values, in order. */
export type JsonPairs = readonly (readonly [key: string, sql: string])[];

/**
 * A json object in SQL, with keys present only when a condition holds: one key list, written into
 * both branches of a CASE (json has no `||`). Built by row_to_json over a one-row subselect: cheaper
 * for the close's 10k objects than json_build_object, which looks up every argument's type again on
 * every call (and jsonb_build_object dearer still). Keys are
 * literals of the code, never input.
 */
export function jsonObjectSql(
  pairs: JsonPairs,
  optional?: { when: string; pairs: JsonPairs },
): string {
  const build = (ps: JsonPairs) => {
    for (const [k] of ps) if (!/^[a-z_]+$/.test(k)) throw new Error(`not a plain key: ${k}`);
    return `(select row_to_json(j) from (select ${ps.map(([k, v]) => `${v} as "${k}"`).join(', ')}) j)`;
  };
  if (!optional) return build(pairs);
  return `case when ${optional.when} then ${build([...pairs, ...optional.pairs])} else ${build(pairs)} end`;
}
