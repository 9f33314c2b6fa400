// The `err` serializer (actors/runtime/log.ts): a database error is logged as its statement's kind,
// SQLSTATE and the server's message with values masked; the SQL, its parameters and PostgreSQL's
// `detail` never reach a log line.
import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { DriverException, UniqueConstraintViolationException } from '@mikro-orm/core';
import { safeError, statementOf, withSafeErrors } from '../../actors/runtime/log.js';

const HASH = 'scrypt$16384$8$1$c2VjcmV0c2FsdA==$c2VjcmV0aGFzaA==';
const PHRASE = 'violet heron at dawn';

/** What pg raises, as MikroORM wraps it: knex put the SQL with its values in front of the message. */
function pgError(
  sql: string,
  server: string,
  fields: Record<string, unknown>,
): Error & Record<string, unknown> {
  const e = Object.assign(new Error(`${sql} - ${server}`), {
    severity: 'ERROR',
    routine: 'x',
    ...fields,
  });
  return e;
}

const unique = () =>
  new UniqueConstraintViolationException(
    pgError(
      `insert into holder (email, password_hash, display_name) values ('ada@example.com', '${HASH}', 'Ada')`,
      'duplicate key value violates unique constraint "holder_email_key"',
      {
        code: '23505',
        detail: `Key (password_hash)=(${HASH}) already exists.`,
        table: 'holder',
        constraint: 'holder_email_key',
        schema: 'public',
      },
    ),
  );

function lines(): { log: pino.Logger; out: string[] } {
  const out: string[] = [];
  const sink = new Writable({ write: (c, _e, cb) => (out.push(String(c)), cb()) });
  return { log: withSafeErrors(pino({ level: 'info' }, sink)), out };
}

t.test(
  'a unique violation: statement, code, constraint and message; no values, no detail',
  async (t) => {
    const e = unique();
    t.match(e.message, HASH, 'the driver message does embed the value');
    const s = safeError(e) as Record<string, any>;
    t.match(s, {
      type: 'UniqueConstraintViolationException',
      code: '23505',
      statement: 'insert into holder',
      table: 'holder',
      constraint: 'holder_email_key',
      message: 'duplicate key value violates unique constraint "holder_email_key"',
    });
    t.notOk('detail' in s);
    t.notMatch(JSON.stringify(s), /scrypt|c2VjcmV0|ada@example/);
    t.match(s.stack, /^UniqueConstraintViolationException: duplicate key value violates/);
    t.match(s.stack, /\n\s+at /, 'frames kept');
  },
);

t.test(
  'a value quoted in the server message is masked; a quoted name of the statement is kept',
  async (t) => {
    const cast = new DriverException(
      pgError(`select '${PHRASE}'::int`, `invalid input syntax for type integer: "${PHRASE}"`, {
        code: '22P02',
      }),
    );
    t.match(safeError(cast), {
      message: 'invalid input syntax for type integer: "?"',
      statement: 'select',
      code: '22P02',
    });
    t.notMatch(JSON.stringify(safeError(cast)), PHRASE);
    const missing = new DriverException(
      pgError(
        `select nope from agent where recall_phrase = '${PHRASE}'`,
        'column "nope" does not exist',
        { code: '42703' },
      ),
    );
    t.match(safeError(missing), {
      message: 'column "nope" does not exist',
      statement: 'select from agent',
    });
    t.notMatch(JSON.stringify(safeError(missing)), PHRASE);
  },
);

t.test('a raw pg error (no SQL in the message) keeps its message but drops detail', async (t) => {
  const e = Object.assign(
    new Error('new row for relation "agent" violates check constraint "agent_name"'),
    {
      code: '23514',
      severity: 'ERROR',
      table: 'agent',
      constraint: 'agent_name',
      detail: `Failing row contains (1, ${PHRASE}).`,
    },
  );
  const s = safeError(e) as Record<string, any>;
  t.equal(s.message, 'new row for relation "agent" violates check constraint "agent_name"');
  t.notMatch(JSON.stringify(s), PHRASE);
});

t.test(
  'causes are cleaned too; other errors keep message and stack; serializing twice changes nothing',
  async (t) => {
    const wrapped = new Error('close failed', { cause: unique() });
    const s = safeError(wrapped) as Record<string, any>;
    t.equal(s.message, 'close failed');
    t.match(s.stack, /^Error: close failed/);
    t.match(s.cause, { code: '23505', statement: 'insert into holder' });
    t.notMatch(JSON.stringify(s), /scrypt|c2VjcmV0/);
    t.equal(safeError(s), s);
    const plain = Object.assign(new TypeError('x is not a function'), { code: 'ERR_X' });
    t.match(safeError(plain), { type: 'TypeError', message: 'x is not a function', code: 'ERR_X' });
  },
);

t.test(
  'a logger given any err: the line names the statement and the cause, never the values',
  async (t) => {
    const { log, out } = lines();
    log.error({ err: unique(), actor: 'holder:ada' }, 'turn failed');
    log.error(unique(), 'as the first argument');
    t.equal(out.length, 2);
    for (const line of out) {
      t.notMatch(line, /scrypt|c2VjcmV0/);
      t.match(JSON.parse(line).err, { code: '23505', statement: 'insert into holder' });
    }
  },
);

t.test('statement kinds', async (t) => {
  t.equal(
    statementOf(
      `with u as (update account set balance_cents = 5 where id = 1 returning id) insert into ledger (x) select id from u`,
    ),
    'update account',
  );
  t.equal(statementOf(`select id from account where id = 1 for update`), 'select from account');
  t.equal(
    statementOf(`delete from "holder_session" where token_hash = 'abc'`),
    'delete from holder_session',
  );
  t.equal(statementOf(`begin`), 'begin');
  t.equal(statementOf(''), undefined);
});
