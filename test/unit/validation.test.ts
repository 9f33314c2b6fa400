import t from 'tap';
import fc from 'fast-check';
import Type from 'typebox';
import {
  compileValidator,
  jsonInvalidIssue,
  validationError,
  type ValidationIssue,
} from '../../src/http/validation.js';

// Runs a validator and returns its issues (or fails the test if the input was accepted).
function issuesOf(
  v: (x: unknown) => ReturnType<ReturnType<typeof compileValidator>>,
  input: unknown,
): ValidationIssue[] {
  const r = v(input);
  if (r.ok) throw new Error(`expected failure, got ${JSON.stringify(r.value)}`);
  return r.issues;
}
function valueOf(
  v: (x: unknown) => ReturnType<ReturnType<typeof compileValidator>>,
  input: unknown,
): any {
  const r = v(input);
  if (!r.ok) throw new Error(`expected success, got ${JSON.stringify(r.issues)}`);
  return r.value;
}

const Query = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 5000, default: 2000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  step: Type.Optional(Type.Number({ exclusiveMinimum: 0.05, maximum: 10, default: 1.0 })),
  cap: Type.Optional(Type.Number({ exclusiveMaximum: 100 })),
  flag: Type.Optional(Type.Boolean()),
  q: Type.Optional(Type.String({ minLength: 2, maxLength: 5 })),
  code: Type.Optional(Type.String({ pattern: '^[a-z]+$' })),
  reveal: Type.Optional(Type.Union([Type.Literal('none'), Type.Literal('full')])),
  side: Type.Optional(Type.Enum(['buy', 'sell'])),
  ids: Type.Optional(Type.Array(Type.Integer())),
  tags: Type.Optional(Type.Array(Type.String())),
});
const query = compileValidator('query', Query);

t.test('query: valid input is coerced, defaults applied, unknown keys ignored', async (t) => {
  t.same(valueOf(query, {}), { limit: 2000, step: 1.0 });
  t.same(
    valueOf(query, {
      limit: '12',
      offset: '0',
      step: '2.5',
      cap: '-3e1',
      flag: 'TRUE',
      q: 'abc',
      code: 'xyz',
      reveal: 'full',
      side: 'sell',
      ids: ['1', '2'],
      tags: 'one',
      unknown: 'whatever',
      other: ['a', 'b'],
    }),
    {
      limit: 12,
      offset: 0,
      step: 2.5,
      cap: -30,
      flag: true,
      q: 'abc',
      code: 'xyz',
      reveal: 'full',
      side: 'sell',
      ids: [1, 2],
      tags: ['one'],
    },
  );
  t.notOk('unknown' in valueOf(query, { unknown: 'x' }));
  t.same(valueOf(query, { limit: ' 7 ' }).limit, 7, 'surrounding blanks tolerated');
  t.same(valueOf(query, { limit: ['3', '9'] }).limit, 9, 'repeated scalar: last wins');
  t.same(valueOf(query, null), { limit: 2000, step: 1.0 }, 'non-object input is treated as empty');
});

t.test('query: booleans', async (t) => {
  for (const [raw, want] of [
    ['true', true],
    ['False', false],
    ['1', true],
    ['0', false],
    ['yes', true],
    ['NO', false],
    ['on', true],
    ['off', false],
  ] as const) {
    t.equal(valueOf(query, { flag: raw }).flag, want, raw);
  }
  t.same(issuesOf(query, { flag: 'maybe' }), [
    {
      loc: ['query', 'flag'],
      msg: 'Input should be a valid boolean, unable to interpret input',
      type: 'bool_parsing',
      input: 'maybe',
    },
  ]);
});

t.test('query: parse failures', async (t) => {
  t.same(issuesOf(query, { limit: '1.5' }), [
    {
      loc: ['query', 'limit'],
      msg: 'Input should be a valid integer, unable to parse string as an integer',
      type: 'int_parsing',
      input: '1.5',
    },
  ]);
  t.same(issuesOf(query, { limit: 'abc' })[0].type, 'int_parsing');
  t.same(issuesOf(query, { limit: '' })[0].type, 'int_parsing');
  t.same(issuesOf(query, { step: 'abc' }), [
    {
      loc: ['query', 'step'],
      msg: 'Input should be a valid number, unable to parse string as a number',
      type: 'float_parsing',
      input: 'abc',
    },
  ]);
  t.same(issuesOf(query, { step: '1e999' })[0].type, 'float_parsing', 'infinity is not a number');
  t.same(issuesOf(query, { ids: ['1', 'x', '3'] }), [
    {
      loc: ['query', 'ids', 1],
      msg: 'Input should be a valid integer, unable to parse string as an integer',
      type: 'int_parsing',
      input: 'x',
    },
  ]);
});

t.test('query: constraints after coercion', async (t) => {
  t.same(issuesOf(query, { limit: '0' }), [
    {
      loc: ['query', 'limit'],
      msg: 'Input should be greater than or equal to 1',
      type: 'greater_than_equal',
      input: 0,
      ctx: { ge: 1 },
    },
  ]);
  t.same(issuesOf(query, { limit: '5001' }), [
    {
      loc: ['query', 'limit'],
      msg: 'Input should be less than or equal to 5000',
      type: 'less_than_equal',
      input: 5001,
      ctx: { le: 5000 },
    },
  ]);
  t.same(issuesOf(query, { step: '0.05' }), [
    {
      loc: ['query', 'step'],
      msg: 'Input should be greater than 0.05',
      type: 'greater_than',
      input: 0.05,
      ctx: { gt: 0.05 },
    },
  ]);
  t.same(issuesOf(query, { cap: '100' }), [
    {
      loc: ['query', 'cap'],
      msg: 'Input should be less than 100',
      type: 'less_than',
      input: 100,
      ctx: { lt: 100 },
    },
  ]);
  t.same(issuesOf(query, { q: 'a' }), [
    {
      loc: ['query', 'q'],
      msg: 'String should have at least 2 characters',
      type: 'string_too_short',
      input: 'a',
      ctx: { min_length: 2 },
    },
  ]);
  t.same(issuesOf(query, { q: 'abcdef' }), [
    {
      loc: ['query', 'q'],
      msg: 'String should have at most 5 characters',
      type: 'string_too_long',
      input: 'abcdef',
      ctx: { max_length: 5 },
    },
  ]);
  t.same(issuesOf(query, { code: 'ABC' }), [
    {
      loc: ['query', 'code'],
      msg: "String should match pattern '^[a-z]+$'",
      type: 'string_pattern_mismatch',
      input: 'ABC',
      ctx: { pattern: '^[a-z]+$' },
    },
  ]);
  t.same(issuesOf(query, { reveal: 'half' }), [
    {
      loc: ['query', 'reveal'],
      msg: "Input should be 'none' or 'full'",
      type: 'literal_error',
      input: 'half',
      ctx: { expected: "'none' or 'full'" },
    },
  ]);
  t.same(issuesOf(query, { side: 'hold' }), [
    {
      loc: ['query', 'side'],
      msg: "Input should be 'buy' or 'sell'",
      type: 'literal_error',
      input: 'hold',
      ctx: { expected: "'buy' or 'sell'" },
    },
  ]);
});

t.test('query: one issue per offending field, in declaration order', async (t) => {
  const issues = issuesOf(query, { code: 'X', limit: 'x', q: 'a', step: '99' });
  t.same(
    issues.map((i) => [i.loc, i.type]),
    [
      [['query', 'limit'], 'int_parsing'],
      [['query', 'step'], 'less_than_equal'],
      [['query', 'q'], 'string_too_short'],
      [['query', 'code'], 'string_pattern_mismatch'],
    ],
  );
});

t.test('query: required and mixed unions', async (t) => {
  const v = compileValidator(
    'query',
    Type.Object({
      from_tick: Type.Integer(),
      sessions: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Literal('all')])),
      level: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
    }),
  );
  t.same(issuesOf(v, {}), [
    { loc: ['query', 'from_tick'], msg: 'Field required', type: 'missing' },
  ]);
  t.same(valueOf(v, { from_tick: '5', sessions: 'all', level: '2' }), {
    from_tick: 5,
    sessions: 'all',
    level: 2,
  });
  t.same(valueOf(v, { from_tick: '5', sessions: '3' }), { from_tick: 5, sessions: 3 });
  t.same(issuesOf(v, { from_tick: '5', sessions: '0' })[0], {
    loc: ['query', 'sessions'],
    msg: 'Input should be greater than or equal to 1',
    type: 'greater_than_equal',
    input: 0,
    ctx: { ge: 1 },
  });
  t.same(issuesOf(v, { from_tick: '5', level: '3' })[0].type, 'literal_error');
  t.throws(() => compileValidator('query', Type.String()), 'query schema must be an object');
});

t.test('path params', async (t) => {
  const v = compileValidator(
    'path',
    Type.Object({ market_id: Type.String({ minLength: 3 }), n: Type.Integer() }),
  );
  t.same(valueOf(v, { market_id: 'abc', n: '4' }), { market_id: 'abc', n: 4 });
  t.same(
    issuesOf(v, { market_id: 'ab', n: 'x' }).map((i) => [i.loc, i.type]),
    [
      [['path', 'market_id'], 'string_too_short'],
      [['path', 'n'], 'int_parsing'],
    ],
  );
});

const Body = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 120 }),
  purpose: Type.Optional(Type.Union([Type.String({ maxLength: 5 }), Type.Null()])),
  qty: Type.Integer({ minimum: 1 }),
  price: Type.Optional(Type.Number()),
  active: Type.Optional(Type.Boolean({ default: true })),
  kind: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Literal('c')])),
  agent: Type.Object({
    model: Type.String({ maxLength: 4 }),
    version: Type.Optional(Type.String({ default: 'v0' })),
  }),
  lines: Type.Optional(
    Type.Array(Type.Object({ qty: Type.Integer({ minimum: 0 }) }), { maxItems: 3 }),
  ),
  meta: Type.Optional(Type.Record(Type.String(), Type.Number())),
});
const body = compileValidator('body', Body);
const good = () => ({ name: 'n', qty: 1, agent: { model: 'm' } });

t.test('body: valid input gets defaults, including nested ones', async (t) => {
  t.same(valueOf(body, good()), {
    name: 'n',
    qty: 1,
    active: true,
    agent: { model: 'm', version: 'v0' },
  });
  t.same(valueOf(body, { ...good(), active: false, purpose: null }).active, false);
  t.same(
    valueOf(body, { ...good(), extra: 1 }).extra,
    1,
    'extra keys are allowed unless forbidden',
  );
});

t.test(
  'body: defaults inside arrays and nullable objects; absent optional objects stay absent',
  async (t) => {
    const v = compileValidator(
      'body',
      Type.Object({
        lines: Type.Array(
          Type.Object({
            qty: Type.Integer({ default: 1 }),
            note: Type.Optional(Type.String({ default: '' })),
          }),
        ),
        opts: Type.Optional(
          Type.Union([
            Type.Object({ depth: Type.Optional(Type.Integer({ default: 5 })) }),
            Type.Null(),
          ]),
        ),
        tags: Type.Optional(Type.Array(Type.String(), { default: [] })),
      }),
    );
    t.same(valueOf(v, { lines: [{}, { qty: 3 }], opts: {} }), {
      lines: [
        { qty: 1, note: '' },
        { qty: 3, note: '' },
      ],
      opts: { depth: 5 },
      tags: [],
    });
    t.same(valueOf(v, { lines: [], opts: null }), { lines: [], opts: null, tags: [] });
    const a = valueOf(v, { lines: [] }),
      b = valueOf(v, { lines: [] });
    t.not(a.tags, b.tags, 'object defaults are copied, not shared');
    t.notOk('opts' in a);
  },
);

t.test('body: strict types, no coercion', async (t) => {
  const cases: [string, unknown, ValidationIssue][] = [
    [
      'name',
      5,
      {
        loc: ['body', 'name'],
        msg: 'Input should be a valid string',
        type: 'string_type',
        input: 5,
      },
    ],
    [
      'qty',
      '5',
      {
        loc: ['body', 'qty'],
        msg: 'Input should be a valid integer',
        type: 'int_type',
        input: '5',
      },
    ],
    [
      'qty',
      1.5,
      {
        loc: ['body', 'qty'],
        msg: 'Input should be a valid integer',
        type: 'int_type',
        input: 1.5,
      },
    ],
    [
      'price',
      '1',
      {
        loc: ['body', 'price'],
        msg: 'Input should be a valid number',
        type: 'float_type',
        input: '1',
      },
    ],
    [
      'active',
      'true',
      {
        loc: ['body', 'active'],
        msg: 'Input should be a valid boolean',
        type: 'bool_type',
        input: 'true',
      },
    ],
    [
      'kind',
      'd',
      {
        loc: ['body', 'kind'],
        msg: "Input should be 'a', 'b' or 'c'",
        type: 'literal_error',
        input: 'd',
        ctx: { expected: "'a', 'b' or 'c'" },
      },
    ],
    [
      'lines',
      {},
      { loc: ['body', 'lines'], msg: 'Input should be a valid list', type: 'list_type', input: {} },
    ],
    [
      'meta',
      [],
      {
        loc: ['body', 'meta'],
        msg: 'Input should be a valid dictionary',
        type: 'dict_type',
        input: [],
      },
    ],
    [
      'name',
      '',
      {
        loc: ['body', 'name'],
        msg: 'String should have at least 1 character',
        type: 'string_too_short',
        input: '',
        ctx: { min_length: 1 },
      },
    ],
  ];
  for (const [key, value, want] of cases)
    t.same(issuesOf(body, { ...good(), [key]: value }), [want], `${key}=${JSON.stringify(value)}`);
});

t.test('body: not an object', async (t) => {
  for (const input of [null, 3, 'x', [], undefined]) {
    const issues = issuesOf(body, input);
    t.equal(issues.length, 1);
    t.same(issues[0].loc, ['body']);
    t.equal(issues[0].type, 'model_type');
  }
});

t.test('body: missing fields and nested paths', async (t) => {
  t.same(issuesOf(body, {}), [
    { loc: ['body', 'name'], msg: 'Field required', type: 'missing' },
    { loc: ['body', 'qty'], msg: 'Field required', type: 'missing' },
    { loc: ['body', 'agent'], msg: 'Field required', type: 'missing' },
  ]);
  t.same(issuesOf(body, { ...good(), agent: { model: 'toolong' } }), [
    {
      loc: ['body', 'agent', 'model'],
      msg: 'String should have at most 4 characters',
      type: 'string_too_long',
      input: 'toolong',
      ctx: { max_length: 4 },
    },
  ]);
  t.same(issuesOf(body, { ...good(), agent: {} }), [
    { loc: ['body', 'agent', 'model'], msg: 'Field required', type: 'missing' },
  ]);
  t.same(issuesOf(body, { ...good(), agent: 'x' })[0].loc, ['body', 'agent']);
  t.same(issuesOf(body, { ...good(), lines: [{ qty: 1 }, { qty: -1 }, {}] }), [
    {
      loc: ['body', 'lines', 1, 'qty'],
      msg: 'Input should be greater than or equal to 0',
      type: 'greater_than_equal',
      input: -1,
      ctx: { ge: 0 },
    },
    { loc: ['body', 'lines', 2, 'qty'], msg: 'Field required', type: 'missing' },
  ]);
  t.same(
    issuesOf(body, { ...good(), lines: [{ qty: 1 }, { qty: 1 }, { qty: 1 }, { qty: 1 }] })[0].type,
    'too_long',
  );
  t.same(issuesOf(body, { ...good(), meta: { a: 1, b: 'x' } }), [
    {
      loc: ['body', 'meta', 'b'],
      msg: 'Input should be a valid number',
      type: 'float_type',
      input: 'x',
    },
  ]);
});

t.test('body: nullable field reports its own constraint', async (t) => {
  t.same(issuesOf(body, { ...good(), purpose: 'far too long' }), [
    {
      loc: ['body', 'purpose'],
      msg: 'String should have at most 5 characters',
      type: 'string_too_long',
      input: 'far too long',
      ctx: { max_length: 5 },
    },
  ]);
  t.same(issuesOf(body, { ...good(), purpose: 7 })[0].type, 'string_type');
  t.equal(valueOf(body, { ...good(), purpose: null }).purpose, null);
});

t.test('body: every offending field reported once, beyond TypeBox maxErrors', async (t) => {
  const issues = issuesOf(body, {
    name: 1,
    purpose: 'xxxxxxxxx',
    qty: 0,
    price: 'p',
    active: 1,
    kind: 'z',
    agent: { model: 5 },
    lines: 1,
    meta: 2,
  });
  t.same(
    issues.map((i) => i.loc.join('.')),
    [
      'body.name',
      'body.purpose',
      'body.qty',
      'body.price',
      'body.active',
      'body.kind',
      'body.agent.model',
      'body.lines',
      'body.meta',
    ],
  );
});

t.test('body: additionalProperties false and untranslated keywords', async (t) => {
  const strict = compileValidator(
    'body',
    Type.Object({ a: Type.String() }, { additionalProperties: false }),
  );
  t.same(issuesOf(strict, { a: 'x', b: 2 }), [
    {
      loc: ['body', 'b'],
      msg: 'Extra inputs are not permitted',
      type: 'extra_forbidden',
      input: 2,
    },
  ]);
  const fmt = compileValidator(
    'body',
    Type.Object({
      n: Type.Integer({ multipleOf: 5 }),
      e: Type.Optional(Type.String({ format: 'email' })),
    }),
  );
  t.same(issuesOf(fmt, { n: 7 }), [
    {
      loc: ['body', 'n'],
      msg: 'Input should be a multiple of 5',
      type: 'multiple_of',
      input: 7,
      ctx: { multiple_of: 5 },
    },
  ]);
  const e = issuesOf(fmt, { n: 5, e: 'nope' });
  t.same(
    e.map((i) => [i.loc, i.type, i.input]),
    [[['body', 'e'], 'value_error', 'nope']],
  );
});

t.test('body: object-level keywords fall back to a generic issue', async (t) => {
  const v = compileValidator(
    'body',
    Type.Object({ a: Type.Optional(Type.String()) }, { minProperties: 1 }),
  );
  t.same(issuesOf(v, {}), [
    {
      loc: ['body'],
      msg: 'must not have fewer than 1 properties',
      type: 'value_error',
      input: {},
      ctx: { keyword: 'minProperties' },
    },
  ]);
});

t.test('body: non-object schemas', async (t) => {
  const list = compileValidator('body', Type.Array(Type.String()));
  t.same(valueOf(list, ['a']), ['a']);
  t.same(issuesOf(list, ['a', 2]), [
    { loc: ['body', 1], msg: 'Input should be a valid string', type: 'string_type', input: 2 },
  ]);
});

t.test('helpers', async (t) => {
  t.same(jsonInvalidIssue('Unexpected token'), {
    loc: ['body'],
    msg: 'JSON decode error',
    type: 'json_invalid',
    ctx: { error: 'Unexpected token' },
  });
  const issues: ValidationIssue[] = [{ loc: ['body'], msg: 'm', type: 't' }];
  t.same(validationError(issues), { detail: issues });
});

t.test('never throws, always explains a rejection (no 5xx from validation)', async (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), (input) => {
      const r = body(structuredClone(input));
      return r.ok || (r.issues.length > 0 && r.issues.every((i) => i.loc[0] === 'body'));
    }),
    { numRuns: 2000 },
  );
  const raw = fc.dictionary(
    fc.constantFrom('limit', 'step', 'flag', 'q', 'code', 'reveal', 'side', 'ids', 'tags', 'x'),
    fc.oneof(fc.string(), fc.array(fc.string())),
  );
  fc.assert(
    fc.property(raw, (input) => {
      const r = query(input);
      return (
        r.ok ||
        (r.issues.length > 0 &&
          r.issues.every(
            (i) =>
              i.loc[0] === 'query' &&
              new Set(r.issues.map((x) => JSON.stringify(x.loc))).size === r.issues.length,
          ))
      );
    }),
    { numRuns: 2000 },
  );
  t.pass('properties hold');
});

t.test(
  'amounts: at most 2 decimals, as typed in a form and as a JSON number (CONTRACT.md "Strict requests")',
  async (t) => {
    const { decimalPlaces, compileFormValidator } = await import('../../src/http/validation.js');
    const { amount, requestBody } = await import('../../src/schemas/common.js');
    t.same(
      ['10', '10.5', '10.50', '10.500', '0.07', '1e-2', '1.5e1', '10.0000000001', '1e-7'].map(
        decimalPlaces,
      ),
      [0, 1, 1, 1, 2, 2, 0, 10, 7],
    );
    t.same([10, 0.07, 0.1 + 0.2, 1e-7, 1234567.89].map(decimalPlaces), [0, 2, 17, 7, 2]);
    const schema = requestBody({ amount: amount('USD', { exclusiveMinimum: 0, maximum: 1e6 }) });
    const body = compileValidator('body', schema);
    for (const ok of [10, 19.99, 999999.99, 0.01]) t.ok(body({ amount: ok }).ok, String(ok));
    const refused = body({ amount: 10.0000000001 });
    t.match(refused, {
      ok: false,
      issues: [{ loc: ['body', 'amount'], type: 'decimal_max_places', ctx: { decimal_places: 2 } }],
    });
    t.match(
      body({ amount: 1, more: 1 }),
      { ok: false, issues: [{ loc: ['body', 'more'], type: 'extra_forbidden' }] },
      'a request body is closed',
    );
    const form = compileFormValidator(schema)!;
    t.match(form({ amount: '25.50' }), { ok: true, value: { amount: 25.5 } });
    t.match(
      form({ amount: '10.000000000000000001' }),
      { ok: false, issues: [{ loc: ['body', 'amount'], type: 'decimal_max_places' }] },
      'the typed text, though it parses to 10',
    );
    t.match(form({ amount: '0.001' }), {
      ok: false,
      issues: [{ loc: ['body', 'amount'], type: 'decimal_max_places' }],
    });
  },
);
