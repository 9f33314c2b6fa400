// Error logs without secrets, for the main thread and the workers alike. A database error's message
// embeds its SQL with the parameter values (knex formats them in) and PostgreSQL's `detail` repeats
// key values: API key hashes, recall phrases, password hashes. So an error is logged as the
// statement's kind ("insert into holder"), the SQLSTATE and the server's message with quoted
// values masked; never the SQL, its parameters or `detail`.
import type { Logger } from 'pino';

export type SafeError = Record<string, unknown> & { type: string; message: string };

/** PostgreSQL error fields that name things, never hold values. */
const PG_NAMES = [
  'severity',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'routine',
] as const;
/** Other fields worth keeping: statuses, and system errors' (ECONNREFUSED ...) names and numbers. */
const PLAIN = ['code', 'status', 'errno', 'syscall', 'address', 'port'] as const;
const SQL_START =
  /^\s*(select|insert|update|delete|with|values|create|alter|drop|truncate|begin|commit|rollback|set|lock|copy|call|do)\b/i;
const LITERAL = /E?'(?:[^'\\]|''|\\.)*'/g;
const MAX_DEPTH = 5;

const isRecord = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null;

/** A PostgreSQL error (pg, or MikroORM's wrapper of one), or any error whose message starts with SQL. */
function isDatabaseError(e: Record<string, any>, message: string): boolean {
  const sqlState =
    typeof e.code === 'string' &&
    /^[0-9A-Z]{5}$/.test(e.code) &&
    ('severity' in e || 'routine' in e);
  return sqlState || (SQL_START.test(message) && message.includes(' - '));
}

/** knex formats `<sql with values> - <server message>`; MikroORM appends `\n - detail: ...`. */
function splitMessage(message: string): { sql: string; server: string } {
  const head = message.split('\n - detail: ')[0];
  const cut = head.lastIndexOf(' - ');
  if (cut < 0 || !SQL_START.test(head)) return { sql: '', server: head };
  return { sql: head.slice(0, cut), server: head.slice(cut + 3) };
}

const unquote = (name: string) => name.replace(/"/g, '');

/** What the statement did and to which table, read from the SQL with its literals removed. */
export function statementOf(sql: string): string | undefined {
  const s = sql.replace(LITERAL, '?').replace(/\s+/g, ' ').trim();
  if (!s) return undefined;
  const first = s.split(' ')[0].toLowerCase();
  const write = /\b(insert into|(?<!for )update|delete from)\s+("?[\w.]+"?)/i.exec(s);
  const read = /\bselect\b.*?\bfrom\s+("?[\w.]+"?)/i.exec(s);
  if (first !== 'select' && write) return `${write[1].toLowerCase()} ${unquote(write[2])}`;
  if (read) return `select from ${unquote(read[1])}`;
  return first;
}

/**
 * The server's message with values masked: single-quoted text always; double-quoted text unless it
 * is a name (an identifier of the statement, or one of the error's own name fields).
 */
function maskValues(server: string, sql: string, e: Record<string, any>): string {
  const names = new Set<string>(sql.replace(LITERAL, ' ').match(/[A-Za-z_][\w$]*/g) ?? []);
  for (const k of PG_NAMES) if (typeof e[k] === 'string') names.add(e[k]);
  return server
    .replace(LITERAL, "'?'")
    .replace(/"((?:[^"]|"")*)"/g, (m, inner: string) => (names.has(inner) ? m : '"?"'));
}

/** Stack frames only: the first lines of a stack repeat the message. */
const framesOf = (stack: unknown) =>
  typeof stack === 'string'
    ? stack
        .split('\n')
        .filter((l) => /^\s+at /.test(l))
        .join('\n')
    : '';

/** Objects this module produced: serializing one again (a call site and the logger both) keeps it. */
const produced = new WeakSet<object>();

function serialize(value: unknown, depth: number, seen: Set<unknown>): unknown {
  if (!isRecord(value) || produced.has(value) || !(value instanceof Error || 'message' in value))
    return value;
  const err: Record<string, any> = value;
  if (seen.has(err) || depth > MAX_DEPTH) return { type: 'Error', message: '[cause omitted]' };
  seen.add(err);
  const type =
    (err.constructor?.name && err.constructor.name !== 'Object'
      ? err.constructor.name
      : err.name) ?? 'Error';
  const raw = String(err.message ?? '');
  const out: SafeError = { type, message: raw };
  for (const k of PLAIN)
    if (typeof err[k] === 'string' || typeof err[k] === 'number') out[k] = err[k];
  if (isDatabaseError(err, raw)) {
    const { sql, server } = splitMessage(raw);
    out.message = maskValues(server, sql, err);
    const statement = statementOf(sql);
    if (statement) out.statement = statement;
    for (const k of PG_NAMES) if (typeof err[k] === 'string') out[k] = err[k];
    out.stack = `${type}: ${out.message}\n${framesOf(err.stack)}`;
  } else if (typeof err.stack === 'string') {
    out.stack = err.stack;
  }
  if (err.cause !== undefined) out.cause = serialize(err.cause, depth + 1, seen);
  if (Array.isArray(err.errors))
    out.errors = err.errors.slice(0, 10).map((e: unknown) => serialize(e, depth + 1, seen));
  produced.add(out);
  return out;
}

/** pino serializer for `err`: what an error may tell a log reader. */
export function safeError(err: unknown): unknown {
  return serialize(err, 0, new Set());
}

export const logSerializers = { err: safeError };

/** The logger with the `err` serializer in force (a caller may hand in any pino logger). */
export function withSafeErrors(log: Logger): Logger {
  return log.child({}, { serializers: logSerializers });
}
