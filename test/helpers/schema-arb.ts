// fast-check arbitraries drawn from a route's own TypeBox schemas: mostly valid values, plus
// boundary values (lengths and bounds just inside and outside) and hostile ones (NUL, lone
// surrogates, huge strings, wrong types).
import fc from 'fast-check';

export const NUL = '\u0000';
export const LONE = ['\ud800', '\udfff', 'a\ud83d', '\ude00b'];

/** Values of the wrong JSON type for anything. */
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 10 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/** A string carrying a character no field may hold (or just too big). */
export const hostileString = fc.oneof(
  fc.string({ maxLength: 20 }).map((s) => s + NUL),
  fc
    .tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...LONE), fc.string({ maxLength: 10 }))
    .map(([a, b, c]) => a + b + c),
  fc.constantFrom(
    'x'.repeat(100_000),
    '😀'.repeat(30_000),
    '%00',
    '\\u0000',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "' or 1=1 --",
    '\r\nSet-Cookie: x=1',
  ),
);

type Opts = { hints?: Record<string, unknown[]> };

/** Any value the schema might receive: valid (weight 6), boundary (2) or hostile (2). */
export function arbOf(s: any, opts: Opts = {}, key?: string): fc.Arbitrary<unknown> {
  const hint = key !== undefined ? opts.hints?.[key] : undefined;
  const valid = validOf(s, opts);
  return fc.oneof(
    { arbitrary: hint ? fc.oneof(fc.constantFrom(...hint), valid) : valid, weight: 6 },
    { arbitrary: boundaryOf(s), weight: 2 },
    { arbitrary: fc.oneof(hostileString, wrongType), weight: 2 },
  );
}

function validOf(s: any, opts: Opts): fc.Arbitrary<unknown> {
  if (!s || typeof s !== 'object') return fc.jsonValue();
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if (Array.isArray(s.anyOf)) return fc.oneof(...s.anyOf.map((b: any) => validOf(b, opts)));
  switch (s.type) {
    case 'string': {
      const min = s.minLength ?? 0;
      const max = Math.min(s.maxLength ?? 40, Math.max(min, 40));
      if (s.pattern)
        return fc
          .stringMatching(new RegExp(s.pattern))
          .filter((v) => v.length >= min && v.length <= (s.maxLength ?? Infinity));
      return fc.string({ minLength: min, maxLength: max });
    }
    case 'integer':
      return fc.integer({
        min: Math.max(s.minimum ?? -1e6, -1e9),
        max: Math.min(s.maximum ?? 1e6, 1e9),
      });
    case 'number':
      return fc.double({
        min: s.minimum ?? -1e6,
        max: s.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validOf(s.items, opts), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 4, 4),
      });
    case 'object':
      return objectOf(s, opts);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** An object with its properties drawn by arbOf; required ones present, a stray key now and then. */
export function objectOf(s: any, opts: Opts = {}): fc.Arbitrary<Record<string, unknown>> {
  const props: Record<string, any> = s.properties ?? {};
  const model = Object.fromEntries(Object.entries(props).map(([k, ps]) => [k, arbOf(ps, opts, k)]));
  const required = (s.required ?? []).filter((k: string) => !('default' in (props[k] ?? {})));
  return fc
    .tuple(
      fc.record(model, { requiredKeys: required }),
      fc.option(
        fc.tuple(
          fc.oneof(
            fc.string({ maxLength: 8 }),
            hostileString.map((x) => x.slice(0, 20)),
          ),
          wrongType,
        ),
        { freq: 5 },
      ),
    )
    .map(([o, extra]) => (extra ? { ...o, [extra[0]]: extra[1] } : o));
}

/** Values at and just past the declared limits. */
function boundaryOf(s: any): fc.Arbitrary<unknown> {
  const out: unknown[] = [];
  if (s?.type === 'string') {
    const min = s.minLength ?? 0;
    out.push('', 'x'.repeat(min), ' '.repeat(Math.max(min, 1)));
    if (min > 0) out.push('x'.repeat(min - 1));
    if (s.maxLength !== undefined)
      out.push('y'.repeat(s.maxLength), 'y'.repeat(s.maxLength + 1), '😀'.repeat(s.maxLength));
  } else if (s?.type === 'integer' || s?.type === 'number') {
    for (const b of [s.minimum, s.maximum, s.exclusiveMinimum, s.exclusiveMaximum])
      if (typeof b === 'number') out.push(b - 1, b, b + 1);
    out.push(0, -1, 1.5, 2 ** 53, -(2 ** 53), 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2);
  } else if (s?.type === 'array') {
    out.push([], new Array((s.maxItems ?? 1000) + 1).fill(0));
  }
  out.push(null, '', 0, [], {});
  return fc.constantFrom(...out);
}

/** A value as it would be spelled in a path segment, query string or form field. */
export function spell(v: unknown): string {
  return typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}
