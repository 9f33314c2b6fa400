// The served /api/openapi.json lints clean with Redocly's recommended rules (no errors). Warnings
// are listed in the test output, not failed on.
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { tempDir } from '../../helpers/db.js';
import { sharedWebService } from '../../helpers/web.js';

const run = promisify(execFile);
const svc = await sharedWebService();

type Problem = {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer: string }[];
};

t.test('redocly lint of the served document: 0 errors', async (t) => {
  const res = await svc.get('/api/openapi.json');
  t.equal(res.status, 200);
  const file = path.join(tempDir(t), 'openapi.json');
  fs.writeFileSync(file, await res.text());
  const cli = path.resolve('node_modules/@redocly/cli/bin/cli.js');
  // Exit code 1 means "errors found": the JSON report is read either way.
  const out = await run(process.execPath, [cli, 'lint', file, '--format=json'], {
    env: {
      ...process.env,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
      CI: 'true',
    },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string }) => ({
    stdout: err.stdout ?? '',
    stderr: err.stderr ?? '',
  }));
  const report = JSON.parse(out.stdout) as {
    totals: { errors: number; warnings: number };
    problems: Problem[];
  };
  const show = (p: Problem) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`;
  const errors = report.problems.filter((p) => p.severity === 'error');
  const warnings = report.problems.filter((p) => p.severity === 'warn');
  for (const w of warnings) t.comment(`warning: ${show(w)}`);
  t.same(errors.map(show), [], 'no errors');
  t.equal(report.totals.errors, 0);
});

t.test(
  'the document: public operations declare security: [], defaults are not required, 2xx bodies are described',
  async (t) => {
    const doc = (await svc.getJson('/api/openapi.json')).body;
    const ops = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item).map(([method, op]) => ({ at: `${method} ${path}`, op })),
    );
    t.ok(ops.length > 20, `${ops.length} operations`);
    for (const { at, op } of ops) {
      t.ok(Array.isArray(op.security), `${at}: security declared`);
      const ok = Object.entries<any>(op.responses).filter(([s]) => s.startsWith('2'));
      // A WebSocket's success is its upgrade (101 Switching Protocols; its frames are in the AsyncAPI document).
      t.ok(ok.length > 0 || op.responses['101'] !== undefined, `${at}: a success answer`);
      for (const [status, r] of ok)
        t.ok(
          r.content && Object.keys(r.content).length > 0,
          `${at} ${status}: its body is described`,
        );
    }
    // Nowhere (request bodies, parameters, answers) is a property both required and defaulted.
    const wrong: string[] = [];
    const walk = (v: any, at: string) => {
      if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${at}/${i}`));
      if (typeof v !== 'object' || v === null) return;
      if (v.properties && Array.isArray(v.required)) {
        for (const k of v.required)
          if (v.properties[k] && 'default' in v.properties[k]) wrong.push(`${at}/properties/${k}`);
      }
      for (const [k, x] of Object.entries(v)) walk(x, `${at}/${k}`);
    };
    walk(doc, '#');
    t.same(wrong, [], 'no required property has a default');
    const order = doc.paths['/api/v1/orders'].post.requestBody.content['application/json'].schema;
    t.notOk(
      order.required.includes('pay_from_balance'),
      'pay_from_balance is optional (default false)',
    );
    t.equal(order.properties.pay_from_balance.default, false);
    // CONTRACT.md "Strict requests": every API JSON body is closed, and POST /orders requires qty.
    for (const { at, op } of ops.filter((o) => o.at.includes(' /api/') && o.op.requestBody)) {
      t.equal(
        op.requestBody.content['application/json'].schema.additionalProperties,
        false,
        `${at}: an undeclared property is refused`,
      );
    }
    t.ok(order.required.includes('qty'), 'qty is required');
  },
);
