// The layers of ARCHITECTURE.md: src/ (front end, supervisor, pure engine) runs no SQL and imports
// nothing from actors/ but the runtime client and the kinds' message types; actors/ never import
// the front end (FRONT_END: the server core and the rooms it serves). Route files (a room's
// routes/ folder) only declare routes: nothing imports one but the route table's assemblers, and
// shared helpers live beside what they serve in their room. No folder holds more than a fifth of
// the source. Scans the sources, so a crossing fails here with its file and line.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { codeLines, ROOT, sourceFiles } from '../helpers/source-scan.js';

/** What src/ may import from actors/. */
const ACTOR_API = [/^actors\/runtime\/client\.(js|ts)$/, /^actors\/[a-z-]+\/messages\.(js|ts)$/];

/** Calls that run SQL or open a database handle. */
const SQL_CALLS: [RegExp, string][] = [
  [/\.execute\(/, '.execute('],
  [/\bgetConnection\(/, 'getConnection('],
  [/\bgetKnex\(/, 'getKnex('],
  [/\bcreateQueryBuilder\(/, 'createQueryBuilder('],
  [/\bem\.find/, 'em.find'],
  [/\bem\.fork\b/, 'em.fork'],
];

/**
 * Known crossings, each to be removed with the change that ends it: a stale entry (nothing crosses
 * there any more) fails too, so this list cannot outlive its reason.
 */
/** Known crossings still to remove (each must still exist, so the list cannot go stale). None left. */
const PENDING: { file: string; line: RegExp; why: string }[] = [];

type Crossing = { file: string; line: number; text: string; what: string };

/** The front end's rooms: the server core (src/http) and what it serves. */
const FRONT_END = [
  'src/http/',
  'src/api/',
  'src/web/',
  'src/events/',
  'src/mcp/',
  'src/ops/',
  'src/docs/',
  'src/market-data/',
];

/** A route file: in a front-end room's routes/ folder. */
const ROUTE_FILE = /^src\/[a-z-]+\/routes\/[a-z-]+\.(js|ts)$/;

/**
 * The modules that assemble routes, each with the route files it may import; no other module imports
 * a route file. An assembler that imports none any more fails too, so this list cannot go stale.
 */
const ROUTE_ASSEMBLERS: { file: string; may: RegExp; why: string }[] = [
  { file: 'src/http/route-table.ts', may: ROUTE_FILE, why: 'the route table' },
  {
    file: 'src/web/routes/index.ts',
    may: /^src\/web\/routes\/[a-z-]+\.(js|ts)$/,
    why: "the holder's web pages, one entry of the table",
  },
  {
    file: 'src/web/routes/console.ts',
    may: /^src\/web\/routes\/(money|key-revoke)\.(js|ts)$/,
    why: "the console's money forms and key revocation, which answer with the console's own pages",
  },
];

/** Module specifiers of static imports, re-exports and dynamic imports on a line. */
function specifiers(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"]([^'"]+)['"]/g)) out.push(m[1]);
  return out;
}

/** Root-relative path an import of `file` resolves to (relative specifiers only; packages are not ours). */
function resolved(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
}

/** The crossings of one src/ file. */
export function srcCrossings(file: string, source: string): Crossing[] {
  const out: Crossing[] = [];
  for (const { n, text } of codeLines(source)) {
    for (const spec of specifiers(text)) {
      const to = resolved(file, spec);
      if (to?.startsWith('actors/') && !ACTOR_API.some((re) => re.test(to))) {
        out.push({
          file,
          line: n,
          text: text.trim(),
          what: `imports ${to}: src/ may import only actors/runtime/client and actors/<kind>/messages`,
        });
      }
    }
    for (const [re, name] of SQL_CALLS) {
      if (re.test(text))
        out.push({
          file,
          line: n,
          text: text.trim(),
          what: `calls ${name}: src/ runs no SQL (ask an actor or run a read task)`,
        });
    }
  }
  return out;
}

/** The crossings of one actors/ file: the front end is never imported. */
export function actorCrossings(file: string, source: string): Crossing[] {
  const out: Crossing[] = [];
  for (const { n, text } of codeLines(source)) {
    for (const spec of specifiers(text)) {
      const to = resolved(file, spec);
      if (to && FRONT_END.some((room) => to.startsWith(room)))
        out.push({
          file,
          line: n,
          text: text.trim(),
          what: `imports ${to}: actors never import the front end`,
        });
    }
  }
  return out;
}

/** The imports of route files in one src/ file that are not an assembler's (helpers and limits belong beside what they serve). */
export function routeCrossings(file: string, source: string): Crossing[] {
  const out: Crossing[] = [];
  const assembler = ROUTE_ASSEMBLERS.find((a) => a.file === file);
  for (const { n, text } of codeLines(source)) {
    for (const spec of specifiers(text)) {
      const to = resolved(file, spec);
      if (!to || !ROUTE_FILE.test(to) || assembler?.may.test(to)) continue;
      out.push({
        file,
        line: n,
        text: text.trim(),
        what: `imports ${to}: only the route table's assemblers import route files; move what is shared out of routes/ into its room`,
      });
    }
  }
  return out;
}

/** One import: the importing file, its line, the imported file. */
type ImportEdge = { from: string; line: number; to: string };

/**
 * The import graph of `files` (root-relative path -> source): every relative import, re-export and
 * dynamic import, type-only ones included (an `import type` loop is a loop of the design, even
 * though the compiler erases it), resolved to a file of the graph (`./x.js` names `x.ts`).
 */
export function importGraph(files: Map<string, string>): Map<string, ImportEdge[]> {
  const graph = new Map<string, ImportEdge[]>();
  for (const [file, source] of files) {
    const edges: ImportEdge[] = [];
    for (const { n, text } of codeLines(source)) {
      for (const spec of specifiers(text)) {
        const to = resolved(file, spec)?.replace(/\.js$/, '.ts');
        if (to && files.has(to) && !edges.some((e) => e.to === to))
          edges.push({ from: file, line: n, to });
      }
    }
    graph.set(file, edges);
  }
  return graph;
}

/**
 * The import loops of a graph: one loop (its imports in order, the last one back to the first file)
 * for each set of files that import each other (Tarjan's strongly connected components), so a
 * tangle of several loops is reported once, by one of them.
 */
export function importLoops(graph: Map<string, ImportEdge[]>): ImportEdge[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const { to } of graph.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      const selfImport = graph.get(v)?.some((e) => e.to === v);
      if (component.length > 1 || selfImport) components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  // One loop through each component: the shortest way from its first file back to it.
  return components.map((component) => {
    const inside = new Set(component);
    const start = component[0];
    const via = new Map<string, ImportEdge>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      for (const e of graph.get(queue[i]) ?? []) {
        if (!inside.has(e.to) || via.has(e.to)) continue;
        via.set(e.to, e);
        if (e.to === start) break;
        queue.push(e.to);
      }
      if (via.has(start)) break;
    }
    const loop: ImportEdge[] = [];
    for (let e = via.get(start)!; ; e = via.get(e.from)!) {
      loop.unshift(e);
      if (e.from === start) break;
    }
    return loop;
  });
}

const showLoop = (loop: ImportEdge[]) =>
  `${loop.map((e) => e.from).join(' -> ')} -> ${loop[0].from}\n${loop.map((e) => `    ${e.from}:${e.line} imports ${e.to}`).join('\n')}`;

const show = (c: Crossing) => `${c.file}:${c.line}: ${c.what}\n    ${c.text}`;
const pendingOf = (c: Crossing) => PENDING.find((p) => p.file === c.file && p.line.test(c.text));

t.test('the scanner finds what it must (so this test can fail)', async (t) => {
  const bad = [
    "import { ActorRuntime } from '../../../actors/runtime/shards.js';",
    "import type { Paid } from '../../../actors/account/actor.js';",
    'const rows = await em.execute(`select 1`);',
    'const em = s.orm.em.fork();',
    "export { x } from '../../../actors/market/rows.js';",
    "const m = await import('../../../actors/holder/reads.js');",
    '  const n = await orm.em.getKnex().client;',
    '  await em.findOne(Holder, { id });',
  ].join('\n');
  const found = srcCrossings('src/api/routes/x.ts', bad);
  t.same(
    found.map((c) => c.line),
    [1, 2, 3, 4, 5, 6, 7, 8],
    found.map(show).join('\n'),
  );
  t.match(show(found[0]), /^src\/api\/routes\/x\.ts:1: imports actors\/runtime\/shards\.js/);
  const fine = [
    "import { read, type ActorRuntime } from '../../../actors/runtime/client.js';",
    "import type { Paid } from '../../../actors/account/messages.js';",
    "import { Type } from 'typebox';",
    '// a comment may say em.execute( or getKnex() without running them',
    '/* nor here: em.fork() */',
  ].join('\n');
  t.same(srcCrossings('src/api/routes/x.ts', fine), []);
  t.same(
    actorCrossings('actors/account/x.ts', "import { json } from '../../src/http/route.js';").map(
      (c) => c.line,
    ),
    [1],
  );
  t.same(
    actorCrossings(
      'actors/account/x.ts',
      "import { dealFacts } from '../../src/web/deal-facts.js';",
    ).map((c) => c.line),
    [1],
  );
  t.same(
    actorCrossings('actors/account/x.ts', "import { MARKETS } from '../../src/engine/index.js';"),
    [],
  );
});

t.test(
  'src/ runs no SQL and imports only the runtime client and message types of actors/',
  async (t) => {
    const crossings = sourceFiles('src').flatMap((f) =>
      srcCrossings(f, readFileSync(path.join(ROOT, f), 'utf8')),
    );
    const unexplained = crossings.filter((c) => !pendingOf(c));
    t.same(
      unexplained.map(show),
      [],
      `src/ crosses into actors/ or the database:\n${unexplained.map(show).join('\n')}`,
    );
    for (const p of PENDING) {
      t.ok(
        crossings.some((c) => pendingOf(c) === p),
        `${p.file}: the pending crossing (${p.why}) is gone: remove it from PENDING`,
      );
    }
  },
);

t.test('actors/ never import the front end (src/http/ and its rooms)', async (t) => {
  const crossings = sourceFiles('actors').flatMap((f) =>
    actorCrossings(f, readFileSync(path.join(ROOT, f), 'utf8')),
  );
  t.same(crossings.map(show), [], crossings.map(show).join('\n'));
});

t.test('the route scanner finds what it must (so the next test can fail)', async (t) => {
  const bad = [
    "import { menuSnapshots } from '../api/routes/markets.js';",
    "import { HISTORY_SPAN } from '../market-data/routes/history.js';",
    "export { recordPosition } from '../market-data/routes/record-common.js';",
    "const { sessionLength } = await import('./routes/site.js');",
    'import {',
    '  TokenParams,',
    "} from './routes/carts.js';",
  ].join('\n');
  const found = routeCrossings('src/web/deal-facts.ts', bad);
  t.same(
    found.map((c) => c.line),
    [1, 2, 3, 4, 7],
    found.map(show).join('\n'),
  );
  t.match(show(found[0]), /^src\/web\/deal-facts\.ts:1: imports src\/api\/routes\/markets\.js/);
  t.same(
    routeCrossings(
      'src/docs/protocol.ts',
      "import { HISTORY_SPAN } from '../market-data/routes/history.js';",
    ).map((c) => c.line),
    [1],
  );
  // A route file importing another's helper, and an assembler importing beyond its routes.
  t.same(
    routeCrossings(
      'src/web/routes/checkout.ts',
      "import { TokenParams, identityView, utc } from './carts.js';",
    ).map((c) => c.line),
    [1],
  );
  t.same(
    routeCrossings(
      'src/web/routes/index.ts',
      "import { marketOr404 } from '../../api/routes/markets.js';",
    ).map((c) => c.line),
    [1],
  );
  t.same(
    routeCrossings(
      'src/service.ts',
      "import { warmCloseAnswers } from './market-data/routes/analytics-book.js';",
    ).map((c) => c.line),
    [1],
  );
  const fine: [string, string][] = [
    ['src/http/route-table.ts', "import { marketRoutes } from '../api/routes/markets.js';"],
    ['src/http/route-table.ts', "import { webRoutes } from '../web/routes/index.js';"],
    ['src/web/routes/index.ts', "import { webCartRoutes } from './carts.js';"],
    ['src/web/routes/console.ts', "import { agentKeyRoute, moneyRoutes } from './money.js';"],
    ['src/service.ts', "import { routeTable } from './http/route-table.js';"],
    [
      'src/market-data/routes/trades.ts',
      "import { MarketParams, marketOr404 } from '../../api/market-params.js';",
    ],
    ['src/web/deal-facts.ts', "// once: import { menuSnapshots } from '../api/routes/markets.js';"],
  ];
  for (const [file, line] of fine) t.same(routeCrossings(file, line), [], `${file}: ${line}`);
});

t.test(
  "nothing imports a route file (a room's routes/) but the route table's assemblers",
  async (t) => {
    const files = sourceFiles('src');
    const crossings = files.flatMap((f) =>
      routeCrossings(f, readFileSync(path.join(ROOT, f), 'utf8')),
    );
    t.same(
      crossings.map(show),
      [],
      `route files imported outside the route table's assemblers:\n${crossings.map(show).join('\n')}`,
    );
    t.ok(
      files.filter((f) => ROUTE_FILE.test(f)).length >= 30,
      'the route files are where ROUTE_FILE looks',
    );
    for (const a of ROUTE_ASSEMBLERS) {
      const imports = codeLines(readFileSync(path.join(ROOT, a.file), 'utf8')).flatMap(({ text }) =>
        specifiers(text).map((spec) => resolved(a.file, spec)),
      );
      t.ok(
        imports.some((to) => to !== null && a.may.test(to)),
        `${a.file} (${a.why}) imports no route file any more: remove it from ROUTE_ASSEMBLERS`,
      );
    }
  },
);

/** Lines of each folder of src/ and actors/ (its subfolders included) and of both together: the non-test source (generated .d.ts left out). */
export function folderShares(
  files: Map<string, number>,
): { folder: string; lines: number; share: number }[] {
  const total = [...files.values()].reduce((a, b) => a + b, 0);
  const byFolder = new Map<string, number>();
  for (const [file, lines] of files) {
    const parts = file.split('/');
    for (let depth = 2; depth < parts.length; depth++) {
      const folder = parts.slice(0, depth).join('/');
      byFolder.set(folder, (byFolder.get(folder) ?? 0) + lines);
    }
  }
  return [...byFolder]
    .map(([folder, lines]) => ({ folder, lines, share: lines / total }))
    .sort((a, b) => b.share - a.share);
}

/** The most of the source one folder may hold (a room over a fifth of the code is several rooms). */
const MAX_FOLDER_SHARE = 0.2;

t.test('no folder of src/ or actors/ holds more than a fifth of the source', async (t) => {
  t.same(
    folderShares(
      new Map([
        ['src/a/x.ts', 30],
        ['src/a/b/y.ts', 10],
        ['actors/k/z.ts', 60],
      ]),
    ).map((f) => [f.folder, f.share]),
    [
      ['actors/k', 0.6],
      ['src/a', 0.4],
      ['src/a/b', 0.1],
    ],
  );
  const files = new Map(
    [...sourceFiles('src'), ...sourceFiles('actors')].map((f) => [
      f,
      readFileSync(path.join(ROOT, f), 'utf8').split('\n').length,
    ]),
  );
  const over = folderShares(files).filter((f) => f.share > MAX_FOLDER_SHARE);
  t.same(
    over.map((f) => `${f.folder}: ${f.lines} lines, ${(f.share * 100).toFixed(1)} %`),
    [],
  );
});

t.test('the loop finder finds a loop of type-only imports, and only loops', async (t) => {
  const files = new Map([
    [
      'actors/k/messages.ts',
      "import type { Row } from './views.js';\nexport type Msg = { row: Row };",
    ],
    [
      'actors/k/views.ts',
      "import { helper } from './helper.js';\nexport type Row = { n: number };",
    ],
    [
      'actors/k/helper.ts',
      "import type {\n  Msg,\n} from './messages.js';\nexport const helper = (m: Msg) => m;",
    ],
    [
      'actors/k/actor.ts',
      "import type { Msg } from './messages.js';\nimport { helper } from './helper.js';\n// import { x } from './actor.js';",
    ],
    ['src/x.ts', "export { helper } from '../actors/k/helper.js';\nimport('./y.js');"],
    ['src/y.ts', "import pino from 'pino';"],
  ]);
  const loops = importLoops(importGraph(files));
  t.same(
    loops.map((l) => l.map((e) => `${e.from}:${e.line}`)),
    [['actors/k/helper.ts:3', 'actors/k/messages.ts:1', 'actors/k/views.ts:1']],
    loops.map(showLoop).join('\n'),
  );
  t.match(
    showLoop(loops[0]),
    /^actors\/k\/helper\.ts -> actors\/k\/messages\.ts -> actors\/k\/views\.ts -> actors\/k\/helper\.ts\n/,
  );
  t.same(
    importLoops(importGraph(new Map([['src/a.ts', "import type { A } from './a.js';"]]))).length,
    1,
    'a file importing itself is a loop',
  );
  t.same(
    importLoops(importGraph(new Map([...files].filter(([f]) => f !== 'actors/k/views.ts')))),
    [],
    'without one of its files, no loop',
  );
});

t.test('src/ and actors/ have no import loops (type-only imports too)', async (t) => {
  const files = new Map(
    [...sourceFiles('src'), ...sourceFiles('actors')].map((f) => [
      f,
      readFileSync(path.join(ROOT, f), 'utf8'),
    ]),
  );
  const graph = importGraph(files);
  t.ok(
    [...graph.values()].reduce((n, edges) => n + edges.length, 0) > 500,
    "the graph has the project's imports",
  );
  const loops = importLoops(graph);
  t.same(
    loops.map(showLoop),
    [],
    `files that import each other (contracts own their types: messages.ts defines, implementations import it):\n${loops.map(showLoop).join('\n')}`,
  );
});
