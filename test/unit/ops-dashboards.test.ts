// ops/grafana/dashboard.json and ops/prometheus/: every metric name their queries use is
// one the service exports (read from src/metrics.ts's registry, not a hand list), the rules file
// parses as YAML with the alerts operators need (5xx, not ready, a market not closing, a worker
// restarted, a mailbox nearly full), and the scrape config names it.
import t from 'tap';
import fs from 'node:fs';
import { parse } from 'yaml';
import { Metrics } from '../../src/metrics.js';

/** Every series name the service's /metrics can carry: histograms also as _bucket, _sum, _count. */
async function exportedNames(): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await new Metrics().snapshot()) {
    names.add(m.name);
    if (m.type === 'histogram' || m.type === 'summary')
      for (const s of ['_bucket', '_sum', '_count']) names.add(m.name + s);
  }
  return names;
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression reads (not its functions, labels, keywords or Grafana variables). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, ' ') // strings
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // ranges
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ') // label lists
    .replace(/\$\{?\w+\}?/g, ' ') // Grafana variables
    .replace(/\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b/gi, ' '); // numbers
  const out: string[] = [];
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    // A name followed by "(" is a function.
    const after = bare.slice(m.index! + m[0].length);
    if (/^\s*\(/.test(after) || KEYWORDS.has(m[0].toLowerCase())) continue;
    out.push(m[0]);
  }
  return [...new Set(out)];
}

const dashboard = JSON.parse(fs.readFileSync('ops/grafana/dashboard.json', 'utf8'));
const rules = parse(fs.readFileSync('ops/prometheus/alerts.yml', 'utf8'));
const scrape = parse(fs.readFileSync('ops/prometheus/prometheus.yml', 'utf8'));

t.test(
  'the name reader finds metric names, not functions, labels or variables (so this test can fail)',
  async (t) => {
    t.same(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{instance=~"$instance"}[5m])))',
      ),
      ['http_request_duration_seconds_bucket'],
    );
    t.same(
      metricNames(
        '(time() - max by (market) (session_last_close_timestamp_seconds)) > 2 * max by (market) (session_interval_seconds)',
      ),
      ['session_last_close_timestamp_seconds', 'session_interval_seconds'],
    );
    t.same(
      metricNames('a_metric > on (instance) group_left() (0.8 * max by (instance) (other_metric))'),
      ['a_metric', 'other_metric'],
    );
    t.same(
      metricNames('label_values(service_ready, instance)'),
      ['service_ready', 'instance'],
      'a label_values query names its label too (checked apart)',
    );
    const names = await exportedNames();
    t.notOk(names.has('http_requests_totl'), 'a misspelt name is not exported');
    t.ok(
      names.has('http_requests_total') &&
        names.has('actor_turn_seconds_bucket') &&
        names.has('process_resident_memory_bytes'),
      'the registry names what the service exports',
    );
  },
);

t.test('every metric the dashboard and the rules use is one the service exports', async (t) => {
  const names = await exportedNames();
  const exprs: { where: string; expr: string }[] = [];
  for (const p of dashboard.panels)
    for (const target of p.targets)
      exprs.push({ where: `dashboard panel "${p.title}"`, expr: target.expr });
  for (const v of dashboard.templating.list)
    if (v.type === 'query')
      exprs.push({
        where: `dashboard variable ${v.name}`,
        expr: String(v.query).replace(/^label_values\((\w+),\s*\w+\)$/, '$1'),
      });
  for (const g of rules.groups)
    for (const r of g.rules) exprs.push({ where: `rule ${r.alert}`, expr: r.expr });
  t.ok(exprs.length >= 20, `${exprs.length} queries`);
  const unknown = exprs.flatMap(({ where, expr }) =>
    metricNames(expr)
      .filter((n) => !names.has(n))
      .map((n) => `${where}: ${n}`),
  );
  t.same(unknown, [], 'metric names the service does not export');
  const used = new Set(exprs.flatMap(({ expr }) => metricNames(expr)));
  for (const n of [
    'http_requests_total',
    'http_request_duration_seconds_bucket',
    'actor_mailbox_depth',
    'actor_turn_seconds_bucket',
    'worker_utilization',
    'worker_restarts',
    'session_closes_total',
    'session_close_seconds_bucket',
    'record_cache_bytes',
    'record_cache_sessions',
    'db_pool_connections',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_p99_seconds',
    'event_streams',
    'event_fanout_seconds_bucket',
    'events_sent_total',
    'event_streams_closed_total',
    'webhook_deliveries_total',
  ]) {
    t.ok(used.has(n), `the dashboard shows ${n} (a panel of /ops)`);
  }
});

t.test('the alert rules parse and cover what issue 30 asks for', async (t) => {
  t.ok(Array.isArray(rules.groups) && rules.groups.length > 0, 'groups');
  const all = rules.groups.flatMap((g: any) => g.rules);
  for (const r of all) {
    t.type(r.alert, 'string');
    t.type(r.expr, 'string');
    t.ok(r.labels?.severity, `${r.alert}: a severity`);
    t.ok(r.annotations?.summary, `${r.alert}: a summary`);
    if (r.for !== undefined) t.match(r.for, /^\d+[smhd]$/, `${r.alert}: for is a duration`);
    let depth = 0;
    for (const c of r.expr) if ((depth += c === '(' ? 1 : c === ')' ? -1 : 0) < 0) break;
    t.equal(depth, 0, `${r.alert}: balanced parentheses`);
  }
  const uses = (alert: string, metric: string, pattern: RegExp) => {
    const r = all.find((x: any) => x.alert === alert);
    t.ok(r, `rule ${alert}`);
    t.ok(metricNames(r.expr).includes(metric), `${alert} reads ${metric}`);
    t.match(r.expr, pattern, `${alert}: ${pattern}`);
  };
  uses('ServerErrors', 'http_requests_total', /status=~"5\.\."/);
  uses('NotReady', 'service_ready', /== 0/);
  uses(
    'MarketNotClosing',
    'session_last_close_timestamp_seconds',
    /> 2 \* max by \(instance, market\) \(session_interval_seconds\)/,
  );
  uses('WorkerRestarted', 'worker_restarts', /> 0/);
  uses(
    'MailboxNearlyFull',
    'actor_mailbox_depth',
    /0\.8 \* max by \(instance\) \(actor_mailbox_limit\)/,
  );
});

t.test('the scrape config reads /metrics and loads the rules', async (t) => {
  t.same(scrape.rule_files, ['alerts.yml']);
  const job = scrape.scrape_configs[0];
  t.equal(job.metrics_path, '/metrics');
  t.ok(job.static_configs[0].targets.length > 0);
});
