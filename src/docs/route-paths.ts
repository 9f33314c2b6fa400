// The one way the discovery texts (manifest, /llms.txt, the agent protocol, the docs pages) name a
// route: through the route table. A text naming a path that no route of that method serves throws
// when the text is built (at start: src/http/route-table.ts), so the texts cannot drift from the
// routes (a text cannot name a route that does not exist).

/** What the texts need of a route. */
export type RouteRef = { method: string; path: string };

export const API_PREFIX = '/api/v1';

const escapeRegExp = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

export class RoutePaths {
  /** `routes` may still grow: it is read when a path is named. */
  constructor(
    readonly baseUrl: string,
    private readonly routes: readonly RouteRef[],
  ) {}

  /**
   * Whether a route of `method` serves `path` (a route's own path, or one with its `{params}` filled,
   * even by a shell variable such as `$CART`; a query string is ignored).
   */
  has(path: string, method = 'GET'): boolean {
    const bare = path.split('?')[0];
    return this.routes.some((r) => r.method === method && pattern(r.path).test(bare));
  }

  /** A site path (`/docs/agents`) checked against the table: a route of each method (GET when none given) serves it. */
  path(path: string, ...methods: string[]): string {
    for (const method of methods.length ? methods : ['GET']) {
      if (!this.has(path, method))
        throw new Error(`a discovery text names ${method} ${path}, which no route serves`);
    }
    return path;
  }

  /** An API path relative to the API base (`/orders`), checked against the table. */
  rel(path: string, ...methods: string[]): string {
    this.path(`${API_PREFIX}${path}`, ...methods);
    return path;
  }

  /** The full address of a site path. */
  url(path: string, ...methods: string[]): string {
    return `${this.baseUrl}${this.path(path, ...methods)}`;
  }

  /** The full address of an API path (`/orders` → `https://host/api/v1/orders`). */
  api(path: string, ...methods: string[]): string {
    return `${this.baseUrl}${API_PREFIX}${this.rel(path, ...methods)}`;
  }

  /** A request line: `POST https://host/api/v1/orders`. */
  req(method: string, path: string): string {
    return `${method} ${this.api(path, method)}`;
  }

  get apiBase(): string {
    return `${this.baseUrl}${API_PREFIX}`;
  }
}

const cache = new Map<string, RegExp>();
/** `/carts/{cart_id}` → a pattern its filled forms (and the template itself) match. */
function pattern(routePath: string): RegExp {
  let re = cache.get(routePath);
  if (!re) {
    re = new RegExp(
      `^${routePath
        .split(/\{[^}]+\}/)
        .map(escapeRegExp)
        .join('[^/]+')}$`,
    );
    cache.set(routePath, re);
  }
  return re;
}
