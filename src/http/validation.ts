// Request validation against the route table's TypeBox schemas, answering like FastAPI/pydantic v2:
// a 422 `{ detail: [{ loc, msg, type, input?, ctx? }] }` with exactly one entry per offending field.
//
// Hot path: each schema is compiled once (typebox/compile) and valid input costs one compiled Check
// (plus string coercion for path/query). Only when Check fails do we walk the schema ourselves to
// explain why; TypeBox's own Errors() is not used for that because it reports every union branch
// separately and stops after a global `maxErrors` (8 by default).
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import Value from 'typebox/value';
import Guard from 'typebox/guard';
import { DECIMAL_PLACES } from '../schemas/common.js';

export type ValidationIssue = {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
};

export type Where = 'path' | 'query' | 'body';
export type ValidationResult = { ok: true; value: any } | { ok: false; issues: ValidationIssue[] };

/** Bound on entries per answer, so a huge invalid array cannot produce a huge 422. */
const MAX_ISSUES = 100;

/** The body of a 422 answer. */
export function validationError(issues: ValidationIssue[]): { detail: ValidationIssue[] } {
  return { detail: issues };
}

/** The single issue the server reports for a body that is not valid JSON. */
export function jsonInvalidIssue(error: string): ValidationIssue {
  return { loc: ['body'], msg: 'JSON decode error', type: 'json_invalid', ctx: { error } };
}

/** Deepest JSON nesting a body may have: everything after parsing (checks, answers, logs) may recurse. */
export const MAX_JSON_DEPTH = 64;

/** JSON.parse, refusing nesting deeper than MAX_JSON_DEPTH (measured by a flat scan, no recursion). */
export function parseJson(text: string): { value: unknown } | { issue: ValidationIssue } {
  if (nestingExceeds(text, MAX_JSON_DEPTH))
    return { issue: jsonInvalidIssue(`nesting deeper than ${MAX_JSON_DEPTH} levels`) };
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    return { issue: jsonInvalidIssue((err as Error).message) };
  }
}

function nestingExceeds(text: string, max: number): boolean {
  if (text.length <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** NUL and unpaired UTF-16 surrogates: no field may carry them (PostgreSQL text refuses both). */
const BAD_CHARS = /\u0000|\p{Cs}/u;
/** Whether `s` has a character no field may carry (the rule for bodies, forms and CSV cells alike). */
export const hasBadChars = (s: string): boolean => BAD_CHARS.test(s);
const badChars = (loc: (string | number)[]): ValidationIssue => ({
  loc,
  msg: 'String should not contain NUL characters or unpaired surrogates',
  type: 'string_invalid_characters',
});

/** Whether any string (or key) anywhere in `value` has a bad character; iterative, allocation-light. */
function hasBadString(value: unknown): boolean {
  // A string or nothing (a path or query field): no stack to walk.
  if (typeof value === 'string') return BAD_CHARS.test(value);
  if (typeof value !== 'object' || value === null) return false;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (BAD_CHARS.test(v)) return true;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (isPlainObject(v)) {
      for (const k in v) {
        if (BAD_CHARS.test(k)) return true;
        stack.push(v[k]);
      }
    }
  }
  return false;
}

/** One issue per string (or key) with a bad character, at its location, in document order. */
function badStringIssues(value: unknown, base: (string | number)[]): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const stack: [unknown, (string | number)[]][] = [[value, base]];
  while (stack.length && out.length < MAX_ISSUES) {
    const [v, loc] = stack.pop()!;
    if (typeof v === 'string') {
      if (BAD_CHARS.test(v)) out.push(badChars(loc));
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], [...loc, i]]);
    } else if (isPlainObject(v)) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        if (BAD_CHARS.test(keys[i])) out.push(badChars([...loc, keys[i]]));
        else stack.push([v[keys[i]], [...loc, keys[i]]]);
      }
    }
  }
  return out;
}

/**
 * Compiles `schema` once and returns the per-request validator. `body` is checked strictly (JSON
 * types as parsed) after filling declared defaults; `path`/`query` take raw strings (query values
 * may be arrays for repeated keys), coerce them to the declared types and ignore unknown keys.
 */
export function compileValidator(
  where: Where,
  schema: TSchema,
): (value: unknown) => ValidationResult {
  const validator = Compile(schema);
  if (where === 'body') {
    const fill = defaulter(schema);
    // TypeBox does not know the decimal-places keyword: a schema that has one is walked after Check.
    const places = hasDecimalPlaces(schema);
    return (value) => {
      const bad = hasBadString(value) ? badStringIssues(value, [where]) : undefined;
      fill?.(value);
      const valid = validator.Check(value);
      if (valid && !bad && places) {
        const issues: ValidationIssue[] = [];
        walk(schema, value, [where], issues);
        if (issues.length) return { ok: false, issues };
      }
      if (valid && !bad) return { ok: true, value };
      if (!bad) return { ok: false, issues: explainField(schema, value, [where]) };
      // Bad characters first; schema issues elsewhere in the value follow.
      const at = new Set(bad.map((i) => JSON.stringify(i.loc)));
      const rest = valid
        ? []
        : explainField(schema, value, [where]).filter((i) => !at.has(JSON.stringify(i.loc)));
      return { ok: false, issues: [...bad, ...rest].slice(0, MAX_ISSUES) };
    };
  }
  return compileStrings(where, schema, validator);
}

/**
 * The validator of a form-posted (urlencoded) body: every value arrives as a string, so the body is
 * coerced like a query string (`account_id=3` is the integer 3), with `loc` under `body`. As with
 * HTML forms in FastAPI, an empty field counts as not sent: its default applies, or it is missing.
 * Undefined when the body schema is not a Type.Object (such a body cannot be a form).
 */
export function compileFormValidator(
  schema: TSchema,
): ((value: unknown) => ValidationResult) | undefined {
  const s = schema as any;
  if (s?.type !== 'object' || !isPlainObject(s.properties)) return undefined;
  return compileStrings('body', schema, Compile(schema), true);
}

// ---------------------------------------------------------------------------------------------
// path / query: raw strings coerced per declared property
// ---------------------------------------------------------------------------------------------

type Coerce = (raw: unknown) => unknown; // the coerced value, or a Parse failure
type Field = {
  key: string;
  schema: any;
  required: boolean;
  coerce: Coerce;
  check: (v: unknown) => boolean;
  places: boolean;
};

function compileStrings(
  where: Where,
  schema: any,
  validator: { Check(v: unknown): boolean },
  emptyIsAbsent = false,
) {
  if (schema?.type !== 'object' || !isPlainObject(schema.properties)) {
    throw new Error(`${where} schema must be a Type.Object`);
  }
  const required = new Set<string>(schema.required ?? []);
  const fields: Field[] = Object.entries<any>(schema.properties).map(([key, s]) => {
    const compiled = Compile(s as TSchema);
    return {
      key,
      schema: s,
      required: required.has(key),
      coerce: fieldCoercer(s),
      check: (v) => compiled.Check(v),
      places: hasDecimalPlaces(s),
    };
  });
  return (raw: unknown): ValidationResult => {
    const input = (isPlainObject(raw) ? raw : {}) as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    let issues: ValidationIssue[] | undefined;
    for (const f of fields) {
      const r = emptyIsAbsent && input[f.key] === '' ? undefined : input[f.key];
      if (hasBadString(r)) {
        (issues ??= []).push(...badStringIssues(r, [where, f.key]));
        continue;
      }
      if (r === undefined) {
        if ('default' in f.schema) out[f.key] = cloneDefault(f.schema.default);
        else if (f.required) (issues ??= []).push(missing([where, f.key]));
        continue;
      }
      const value = f.coerce(r);
      if (value instanceof Parse) (issues ??= []).push(...value.at([where, f.key]));
      else if (f.places && typeof r === 'string' && tooManyPlaces(f.schema, r.trim())) {
        // The typed text, not the parsed number: '10.000000000000000001' parses to 10.
        (issues ??= []).push(placesIssue([where, f.key], placesOf(f.schema)!, value));
      } else if (f.check(value) && !(f.places && tooManyPlaces(f.schema, value)))
        out[f.key] = value;
      else if (f.check(value))
        (issues ??= []).push(placesIssue([where, f.key], placesOf(f.schema)!, value));
      else {
        (issues ??= []).push(...explainField(f.schema, value, [where, f.key]));
      }
    }
    if (issues) return { ok: false, issues: issues.slice(0, MAX_ISSUES) };
    // Object-level keywords (rare for query/path) are still enforced by the whole-schema check.
    if (!validator.Check(out)) return { ok: false, issues: fallbackIssues(schema, out, [where]) };
    return { ok: true, value: out };
  };
}

/** Failure to read one or more raw strings as the declared type; `loc` is filled in by the caller. */
class Parse {
  constructor(
    readonly issues: { sub: (string | number)[]; issue: Omit<ValidationIssue, 'loc'> }[],
  ) {}
  at(loc: (string | number)[]): ValidationIssue[] {
    return this.issues.map(({ sub, issue }) => ({ loc: [...loc, ...sub], ...issue }));
  }
}
const parseFailure = (type: string, msg: string, input: unknown) =>
  new Parse([{ sub: [], issue: { msg, type, input: echo(input) } }]);

function fieldCoercer(schema: any): Coerce {
  if (schema.type === 'array') return listCoercer(schema);
  const scalar = scalarCoercer(schema);
  // A union with a list branch (a text or its items one field each): repeated keys are the list.
  const list = Array.isArray(schema.anyOf)
    ? (schema.anyOf as any[]).find((b) => b.type === 'array')
    : undefined;
  if (list) {
    const items = listCoercer(list);
    return (raw) => (Array.isArray(raw) ? items(raw) : scalar(raw));
  }
  // A scalar given several times: the last one wins, as in FastAPI.
  return (raw) => scalar(Array.isArray(raw) ? raw[raw.length - 1] : raw);
}

/** Repeated keys give the items; a single occurrence is a one-item list. */
function listCoercer(schema: any): Coerce {
  const item = scalarCoercer(schema.items ?? {});
  return (raw) => {
    const values = (Array.isArray(raw) ? raw : [raw]).map(item);
    const failed = values.flatMap((v, i) =>
      v instanceof Parse ? v.issues.map((x) => ({ ...x, sub: [i, ...x.sub] })) : [],
    );
    return failed.length ? new Parse(failed) : values;
  };
}

const INT = /^[+-]?\d+$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOLS = new Map(
  Object.entries({
    true: true,
    false: false,
    '1': true,
    '0': false,
    yes: true,
    no: false,
    on: true,
    off: false,
  }),
);

/** Built once per schema node, so the request path does no schema inspection. */
function scalarCoercer(schema: any): Coerce {
  if (Array.isArray(schema.anyOf)) return unionCoercer(schema.anyOf as any[]);
  const literals: unknown[] | undefined = 'const' in schema ? [schema.const] : schema.enum;
  if (literals) return literalCoercer(literals);
  switch (schema.type) {
    case 'integer':
      return (raw) => {
        if (typeof raw !== 'string') return raw;
        const n = Number(raw.trim());
        return INT.test(raw.trim()) && Number.isFinite(n)
          ? n
          : parseFailure(
              'int_parsing',
              'Input should be a valid integer, unable to parse string as an integer',
              raw,
            );
      };
    case 'number':
      return (raw) => {
        if (typeof raw !== 'string') return raw;
        const n = Number(raw.trim());
        return FLOAT.test(raw.trim()) && Number.isFinite(n)
          ? n
          : parseFailure(
              'float_parsing',
              'Input should be a valid number, unable to parse string as a number',
              raw,
            );
      };
    case 'boolean':
      return (raw) => {
        if (typeof raw !== 'string') return raw;
        return (
          BOOLS.get(raw.trim().toLowerCase()) ??
          parseFailure(
            'bool_parsing',
            'Input should be a valid boolean, unable to interpret input',
            raw,
          )
        );
      };
    default:
      return (raw) => raw;
  }
}

/**
 * A union's: the first branch that both parses and checks wins (e.g. Integer | Literal('all'));
 * otherwise the first that parses (its constraint is reported later), otherwise the first parse
 * failure.
 */
function unionCoercer(anyOf: any[]): Coerce {
  const branches = anyOf
    .filter((b) => b.type !== 'null')
    .map((b) => {
      const compiled = Compile(b as TSchema);
      return { coerce: scalarCoercer(b), check: (v: unknown) => compiled.Check(v) };
    });
  return (raw) => {
    let parsed: unknown = undefined,
      failure: Parse | undefined;
    for (const b of branches) {
      const v = b.coerce(raw);
      if (v instanceof Parse) failure ??= v;
      else if (b.check(v)) return v;
      else if (parsed === undefined) parsed = v;
    }
    return parsed ?? failure ?? raw;
  };
}

/** Literals / enums of numbers or booleans: converted when possible, else the check reports literal_error. */
function literalCoercer(literals: unknown[]): Coerce {
  const numbers = literals.some((l) => typeof l === 'number');
  const bools = literals.some((l) => typeof l === 'boolean');
  return (raw) => {
    if (typeof raw !== 'string' || literals.includes(raw)) return raw;
    const s = raw.trim();
    if (numbers && FLOAT.test(s)) return Number(s);
    if (bools && BOOLS.has(s.toLowerCase())) return BOOLS.get(s.toLowerCase());
    return raw;
  };
}

// ---------------------------------------------------------------------------------------------
// Explaining a failed check: one pydantic-style issue per offending value
// ---------------------------------------------------------------------------------------------

function explainField(schema: any, value: unknown, loc: (string | number)[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  walk(schema, value, loc, issues);
  // The walker found nothing it could name (e.g. an object-level keyword): say something anyway.
  if (!issues.length) return fallbackIssues(schema, value, loc);
  // allOf branches may describe the same field twice: keep the first word on each location.
  const seen = new Set<string>();
  return issues
    .filter((i) => !seen.has(JSON.stringify(i.loc)) && !!seen.add(JSON.stringify(i.loc)))
    .slice(0, MAX_ISSUES);
}

/** Appends at most one issue for `value` itself, plus those of its members (objects, arrays). */
function walk(s: any, v: unknown, loc: (string | number)[], out: ValidationIssue[]): void {
  if (out.length >= MAX_ISSUES || !isPlainObject(s)) return;
  if (Array.isArray(s.anyOf)) return walkUnion(s, v, loc, out);
  if (Array.isArray(s.allOf)) return s.allOf.forEach((b: any) => walk(b, v, loc, out));
  if ('const' in s || Array.isArray(s.enum)) {
    const allowed: unknown[] = 'const' in s ? [s.const] : s.enum;
    if (!allowed.some((a) => safeCheck({ const: a }, v))) out.push(literalIssue(loc, allowed, v));
    return;
  }
  const before = out.length;
  switch (s.type) {
    case 'object':
      return walkObject(s, v, loc, out);
    case 'array':
      return walkArray(s, v, loc, out);
    case 'string':
      if (typeof v !== 'string')
        return void out.push(issue(loc, 'string_type', 'Input should be a valid string', v));
      stringRules(s, v, loc, out);
      break;
    case 'integer':
      if (!Number.isInteger(v))
        return void out.push(issue(loc, 'int_type', 'Input should be a valid integer', v));
      numberRules(s, v as number, loc, out);
      break;
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v))
        return void out.push(issue(loc, 'float_type', 'Input should be a valid number', v));
      numberRules(s, v, loc, out);
      break;
    case 'boolean':
      if (typeof v !== 'boolean')
        out.push(issue(loc, 'bool_type', 'Input should be a valid boolean', v));
      break;
    case 'null':
      if (v !== null) out.push(issue(loc, 'none_required', 'Input should be None', v));
      break;
  }
  // Keywords we do not translate (format, multipleOf, ...) still get reported, generically.
  if (out.length === before && !safeCheck(s, v)) out.push(...fallbackIssues(s, v, loc));
}

function walkUnion(s: any, v: unknown, loc: (string | number)[], out: ValidationIssue[]): void {
  const branches: any[] = s.anyOf;
  if (branches.some((b) => safeCheck(b, v))) return;
  const nonNull = branches.filter((b) => b.type !== 'null');
  // A union of literals (Type.Union([Type.Literal('a'), ...]), maybe nullable) is one enum.
  if (nonNull.length && nonNull.every((b) => 'const' in b || Array.isArray(b.enum))) {
    return void out.push(
      literalIssue(
        loc,
        nonNull.flatMap((b) => ('const' in b ? [b.const] : b.enum)),
        v,
      ),
    );
  }
  // Otherwise explain with the branch the value was evidently meant for: the nullable's
  // non-null branch, or the first branch of the value's JSON type.
  const meant = nonNull.find((b) => typeMatches(b, v)) ?? nonNull[0] ?? branches[0];
  walk(meant, v, loc, out);
}

function walkObject(s: any, v: unknown, loc: (string | number)[], out: ValidationIssue[]): void {
  const props: Record<string, any> = s.properties ?? {};
  if (!isPlainObject(v)) {
    const isModel = Object.keys(props).length > 0;
    return void out.push(
      isModel
        ? issue(
            loc,
            'model_type',
            'Input should be a valid dictionary or object to extract fields from',
            v,
          )
        : issue(loc, 'dict_type', 'Input should be a valid dictionary', v),
    );
  }
  const obj = v as Record<string, unknown>;
  const required = new Set<string>(s.required ?? []);
  for (const [key, ps] of Object.entries(props)) {
    if (obj[key] === undefined) {
      if (required.has(key)) out.push(missing([...loc, key]));
    } else walk(ps, obj[key], [...loc, key], out);
  }
  // Records (Type.Record) are patternProperties; other extra keys answer to additionalProperties.
  const patterns = Object.entries<any>(s.patternProperties ?? {}).map(
    ([p, ps]) => [new RegExp(p, 'u'), ps] as const,
  );
  if (!patterns.length && (s.additionalProperties === undefined || s.additionalProperties === true))
    return;
  for (const key of Object.keys(obj)) {
    if (key in props) continue;
    const matching = patterns.filter(([re]) => re.test(key));
    if (matching.length) matching.forEach(([, ps]) => walk(ps, obj[key], [...loc, key], out));
    else if (s.additionalProperties === undefined || s.additionalProperties === true) continue;
    else if (s.additionalProperties === false)
      out.push(issue([...loc, key], 'extra_forbidden', 'Extra inputs are not permitted', obj[key]));
    else walk(s.additionalProperties, obj[key], [...loc, key], out);
  }
}

function walkArray(s: any, v: unknown, loc: (string | number)[], out: ValidationIssue[]): void {
  if (!Array.isArray(v))
    return void out.push(issue(loc, 'list_type', 'Input should be a valid list', v));
  const n = v.length;
  if (typeof s.minItems === 'number' && n < s.minItems) {
    return void out.push(
      issue(
        loc,
        'too_short',
        `List should have at least ${s.minItems} item${s.minItems === 1 ? '' : 's'} after validation, not ${n}`,
        v,
        { field_type: 'List', min_length: s.minItems, actual_length: n },
      ),
    );
  }
  if (typeof s.maxItems === 'number' && n > s.maxItems) {
    return void out.push(
      issue(
        loc,
        'too_long',
        `List should have at most ${s.maxItems} item${s.maxItems === 1 ? '' : 's'} after validation, not ${n}`,
        v,
        { field_type: 'List', max_length: s.maxItems, actual_length: n },
      ),
    );
  }
  if (isPlainObject(s.items)) v.forEach((item, i) => walk(s.items, item, [...loc, i], out));
}

function stringRules(s: any, v: string, loc: (string | number)[], out: ValidationIssue[]): void {
  // Lengths count Unicode code points, as TypeBox does.
  if (typeof s.minLength === 'number' && !Guard.IsMinLength(v, s.minLength)) {
    out.push(
      issue(
        loc,
        'string_too_short',
        `String should have at least ${s.minLength} character${s.minLength === 1 ? '' : 's'}`,
        v,
        { min_length: s.minLength },
      ),
    );
  } else if (typeof s.maxLength === 'number' && !Guard.IsMaxLength(v, s.maxLength)) {
    out.push(
      issue(
        loc,
        'string_too_long',
        `String should have at most ${s.maxLength} character${s.maxLength === 1 ? '' : 's'}`,
        v,
        { max_length: s.maxLength },
      ),
    );
  } else if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) {
    const pattern = String(s.pattern instanceof RegExp ? s.pattern.source : s.pattern);
    out.push(
      issue(loc, 'string_pattern_mismatch', `String should match pattern '${pattern}'`, v, {
        pattern,
      }),
    );
  }
}

function numberRules(s: any, v: number, loc: (string | number)[], out: ValidationIssue[]): void {
  const rule =
    typeof s.minimum === 'number' && !(v >= s.minimum)
      ? ['greater_than_equal', 'ge', 'greater than or equal to', s.minimum]
      : typeof s.exclusiveMinimum === 'number' && !(v > s.exclusiveMinimum)
        ? ['greater_than', 'gt', 'greater than', s.exclusiveMinimum]
        : typeof s.maximum === 'number' && !(v <= s.maximum)
          ? ['less_than_equal', 'le', 'less than or equal to', s.maximum]
          : typeof s.exclusiveMaximum === 'number' && !(v < s.exclusiveMaximum)
            ? ['less_than', 'lt', 'less than', s.exclusiveMaximum]
            : typeof s.multipleOf === 'number' && !safeCheck({ multipleOf: s.multipleOf }, v)
              ? ['multiple_of', 'multiple_of', 'a multiple of', s.multipleOf]
              : undefined;
  if (rule)
    out.push(
      issue(loc, rule[0], `Input should be ${rule[2]} ${rule[3]}`, v, { [rule[1]]: rule[3] }),
    );
  else if (tooManyPlaces(s, v)) out.push(placesIssue(loc, s[DECIMAL_PLACES], v));
}

// ---------------------------------------------------------------------------------------------
// decimal places (amounts: CONTRACT.md "Strict requests")
// ---------------------------------------------------------------------------------------------

const DECIMAL = /^[+-]?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/**
 * Decimal places of a number as written (a string) or as JavaScript writes it back (the shortest
 * text that reads as the same double: what a JSON body said, to double precision); trailing zeros
 * do not count.
 */
export function decimalPlaces(v: number | string): number {
  const m = DECIMAL.exec(typeof v === 'number' ? String(v) : v);
  if (!m) return 0;
  const fraction = (m[2] ?? '').replace(/0+$/, '');
  return Math.max(0, fraction.length - Number(m[3] ?? 0));
}

/** The decimal places a schema allows: its own keyword, or that of the one number a nullable union holds (an optional amount). */
function placesOf(s: any): number | undefined {
  const own = s?.[DECIMAL_PLACES];
  if (typeof own === 'number') return own;
  const member = Array.isArray(s?.anyOf)
    ? s.anyOf.find((m: any) => typeof m?.[DECIMAL_PLACES] === 'number')
    : undefined;
  return member?.[DECIMAL_PLACES];
}

function tooManyPlaces(s: any, v: unknown): boolean {
  const max = placesOf(s);
  return (
    typeof max === 'number' &&
    (typeof v === 'number' || typeof v === 'string') &&
    decimalPlaces(v) > max
  );
}

const placesIssue = (loc: (string | number)[], max: number, v: unknown): ValidationIssue =>
  issue(
    loc,
    'decimal_max_places',
    `Decimal input should have no more than ${max} decimal places`,
    v,
    { decimal_places: max },
  );

/** Whether the schema has the decimal-places keyword anywhere (decided once per schema). */
function hasDecimalPlaces(s: any): boolean {
  if (!isPlainObject(s)) return false;
  if (DECIMAL_PLACES in s) return true;
  return Object.values(s).some((v) =>
    Array.isArray(v) ? v.some(hasDecimalPlaces) : hasDecimalPlaces(v),
  );
}

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

function issue(
  loc: (string | number)[],
  type: string,
  msg: string,
  input: unknown,
  ctx?: Record<string, unknown>,
): ValidationIssue {
  const shown = echo(input);
  const out: ValidationIssue =
    shown === OMIT ? { loc, msg, type } : { loc, msg, type, input: shown };
  if (ctx) out.ctx = ctx;
  return out;
}

/** Longest string echoed back in `input` (code units). */
const ECHO_MAX = 100;
const OMIT = Symbol('omit');

/**
 * What a 422 echoes of an offending value: primitives (long strings cut), and objects or arrays only
 * when small and flat. An answer never re-serialises unbounded input (deeply nested input would
 * overflow the stack in JSON.stringify).
 */
function echo(v: unknown): unknown {
  if (typeof v === 'string') return cut(v);
  if (typeof v !== 'object' || v === null) return v;
  const entries = Array.isArray(v) ? v.map((x, i) => [i, x] as const) : Object.entries(v);
  if (entries.length > 8 || entries.some(([, x]) => typeof x === 'object' && x !== null))
    return OMIT;
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? cut(x) : x));
  return Object.fromEntries(
    entries.map(([k, x]) => [cut(String(k)), typeof x === 'string' ? cut(x) : x]),
  );
}

function cut(s: string): string {
  if (s.length <= ECHO_MAX) return s;
  // Do not split a surrogate pair.
  const end = /[\ud800-\udbff]/.test(s[ECHO_MAX - 1]) ? ECHO_MAX - 1 : ECHO_MAX;
  return `${s.slice(0, end)}…`;
}

function missing(loc: (string | number)[]): ValidationIssue {
  return { loc, msg: 'Field required', type: 'missing' };
}

/** pydantic's wording: "'a' or 'b'", "'a', 'b' or 'c'". */
function literalIssue(loc: (string | number)[], allowed: unknown[], v: unknown): ValidationIssue {
  const shown = allowed.map((a) => (typeof a === 'string' ? `'${a}'` : JSON.stringify(a)));
  const expected =
    shown.length > 1
      ? `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`
      : (shown[0] ?? '');
  return issue(loc, 'literal_error', `Input should be ${expected}`, v, { expected });
}

/** Last resort for keywords the walker does not translate: TypeBox's own first error, generically typed. */
function fallbackIssues(schema: any, value: unknown, base: (string | number)[]): ValidationIssue[] {
  let errors: { instancePath: string; message: string; keyword: string }[] = [];
  try {
    errors = Value.Errors(schema, value);
  } catch {
    // A schema TypeBox cannot evaluate standalone (e.g. an unresolved $ref): report the value as a whole.
  }
  const e = errors.find((x) => x.keyword !== 'anyOf') ?? errors[0];
  const path = (e?.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((p) => (/^\d+$/.test(p) ? Number(p) : p.replace(/~1/g, '/').replace(/~0/g, '~')));
  const loc = [...base, ...path];
  const input = path.reduce<any>((v, p) => (v == null ? v : v[p]), value);
  return [
    issue(
      loc,
      'value_error',
      e?.message ?? 'Invalid value',
      input,
      e ? { keyword: e.keyword } : undefined,
    ),
  ];
}

function safeCheck(s: any, v: unknown): boolean {
  try {
    return Value.Check(s, v);
  } catch {
    return true; // cannot judge this node alone; the compiled whole-schema check already failed
  }
}

function typeMatches(s: any, v: unknown): boolean {
  switch (s.type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isPlainObject(v);
    default:
      return false;
  }
}

function isPlainObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Builds (once) a function that fills declared defaults into absent object properties, in place
 * (the parsed body belongs to this request), descending into nested objects, arrays and the
 * object branches of unions (all of them: fine for nullable objects, the common case); undefined
 * when the schema declares no defaults at all. Cheaper on the hot path than TypeBox's
 * Value.Default, which re-walks the schema on every call.
 */
function defaulter(s: any): ((v: unknown) => void) | undefined {
  if (!isPlainObject(s)) return undefined;
  if (Array.isArray(s.anyOf) || Array.isArray(s.allOf)) {
    const parts = [...(s.anyOf ?? []), ...(s.allOf ?? [])]
      .map(defaulter)
      .filter((f) => f !== undefined);
    return parts.length ? (v) => parts.forEach((f) => f(v)) : undefined;
  }
  if (s.type === 'array') {
    const item = defaulter(s.items);
    return item && ((v) => Array.isArray(v) && v.forEach(item));
  }
  if (s.type !== 'object' || !isPlainObject(s.properties)) return undefined;
  const steps = Object.entries<any>(s.properties).flatMap(([key, ps]) => {
    const inner = defaulter(ps);
    const hasDefault = isPlainObject(ps) && 'default' in ps;
    return hasDefault || inner ? [{ key, hasDefault, value: ps?.default, inner }] : [];
  });
  if (!steps.length) return undefined;
  return (v) => {
    if (!isPlainObject(v)) return;
    for (const st of steps) {
      if (v[st.key] === undefined && st.hasDefault) v[st.key] = cloneDefault(st.value);
      if (st.inner && v[st.key] !== undefined) st.inner(v[st.key]);
    }
  };
}

function cloneDefault(d: unknown): unknown {
  if (typeof d === 'function') return d();
  return typeof d === 'object' && d !== null ? structuredClone(d) : d;
}
