// Public discovery: manifest, llms.txt, robots.txt, catalog, payment methods, the agent protocol,
// the AsyncAPI document of the events, the OpenAPI document and its interactive docs (Swagger UI served from the npm package: no CDN).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import Type, { type Static } from 'typebox';
import { catalog } from '../../engine/index.js';
import {
  Media,
  htmlPage,
  media,
  route,
  text,
  type PublicContext,
  type Reply,
  type Route,
} from '../../http/route.js';
import { AgentProtocol, Catalog, Manifest, PaymentMethods } from '../../schemas/index.js';
import { renderPage } from '../../web/pages.js';
import { openApiDocument } from '../../api/openapi.js';
import { asyncApiDocument } from '../../events/asyncapi.js';
import { ASYNCAPI_PATH } from '../events.js';
import { paymentMethods } from '../payments.js';
import type { discoveryTexts } from '../discovery-texts.js';
import type { Services } from '../../http/services.js';

const API = '/api/v1';

const require = createRequire(import.meta.url);
const SWAGGER_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const DOC_ASSETS = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
} as const;
type DocAsset = keyof typeof DOC_ASSETS;
const DocAssetParams = Type.Object({
  asset: Type.Union(Object.keys(DOC_ASSETS).map((k) => Type.Literal(k))),
});
type DocAssetParams = Static<typeof DocAssetParams>;
const JSON_TYPE = 'application/json';
type Texts = () => ReturnType<typeof discoveryTexts>;

const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));
/** `make`'s value, made on the first call. */
function once<T>(make: () => T): () => T {
  let v: T | undefined;
  return () => (v ??= make());
}

/**
 * `texts` answers the texts that name routes: they need the finished table, so the route table
 * builds them once it is complete (src/http/route-table.ts) and a text naming a path no route
 * serves stops the start.
 */
export function discoveryRoutes(s: Services, texts: Texts): Route[] {
  return [
    ...serviceDocumentRoutes(s.config.baseUrl, texts),
    ...plainTextRoutes(texts),
    ...apiDescriptionRoutes(s.config.baseUrl),
  ];
}

/** The API's documents of the service: manifest, catalog, payment methods, agent protocol. */
function serviceDocumentRoutes(base: string, texts: Texts): Route[] {
  // Constant for the life of the process: serialised once.
  const catalogBytes = bytes(catalog());
  const paymentsBytes = bytes(paymentMethods(base));
  return [
    route({
      method: 'GET',
      path: `${API}/manifest`,
      operationId: 'get_manifest',
      auth: 'none',
      summary: 'What the service is: markets, flow, payments, engine, schema',
      response: { 200: Manifest },
      handler: () => getManifest(texts),
    }),
    route({
      method: 'GET',
      path: `${API}/catalog`,
      operationId: 'get_catalog',
      auth: 'none',
      summary: 'Item families with their items, add-ons and grades',
      response: { 200: Catalog },
      handler: () => getCatalog(catalogBytes),
    }),
    route({
      method: 'GET',
      path: `${API}/payments/methods`,
      operationId: 'list_payment_methods',
      auth: 'none',
      summary: 'Payment methods and readiness, monthly fee, payout terms',
      response: { 200: PaymentMethods },
      handler: () => listPaymentMethods(paymentsBytes),
    }),
    route({
      method: 'GET',
      path: `${API}/agents/protocol`,
      operationId: 'get_protocol',
      auth: 'none',
      summary: "The agent's working protocol as data",
      response: { 200: AgentProtocol },
      handler: () => getProtocol(texts),
    }),
  ];
}

/** The plain texts at the site's root: the guide for language models and the crawler rules. */
function plainTextRoutes(texts: Texts): Route[] {
  return [
    route({
      method: 'GET',
      path: '/llms.txt',
      auth: 'none',
      summary: 'Plain-text guide for language-model agents',
      response: { 200: media('text/plain; charset=utf-8', 'the guide') },
      handler: () => getLlmsTxt(texts),
    }),
    route({
      method: 'GET',
      path: '/robots.txt',
      auth: 'none',
      summary: 'Crawler rules',
      response: { 200: media('text/plain; charset=utf-8', 'robots.txt') },
      handler: () => getRobotsTxt(),
    }),
  ];
}

/** The AsyncAPI document and the interactive API docs with their files (outside the API). */
function apiDescriptionRoutes(base: string): Route[] {
  // Constant for the life of the process: serialised (or read) once, on first use.
  const asyncApiBytes = once(() => bytes(asyncApiDocument(base)));
  const assets = new Map<string, Buffer>();
  return [
    route({
      method: 'GET',
      path: ASYNCAPI_PATH,
      auth: 'none',
      api: false,
      summary:
        'AsyncAPI 3.0 description of the event stream, the market stream, the WebSocket and webhooks',
      response: { 200: media(JSON_TYPE, 'this document') },
      handler: () => getAsyncApi(asyncApiBytes),
    }),
    route({
      method: 'GET',
      path: '/api/docs',
      auth: 'none',
      api: false,
      summary: 'Interactive API docs',
      response: { 200: htmlPage('Swagger UI over /api/openapi.json') },
      handler: () => getApiDocs(),
    }),
    route<DocAssetParams>({
      method: 'GET',
      path: '/api/docs/{asset}',
      auth: 'none',
      api: false,
      summary: 'Static files of the API docs',
      params: DocAssetParams,
      response: {
        200: new Media(
          'the file',
          Object.fromEntries(Object.values(DOC_ASSETS).map((t) => [t, undefined])),
        ),
      },
      handler: (c) => getDocAsset(assets, c),
    }),
  ];
}

function getManifest(texts: Texts): Reply {
  return { body: texts().manifest, contentType: JSON_TYPE };
}

function getCatalog(catalogBytes: Buffer): Reply {
  return { body: catalogBytes, contentType: JSON_TYPE };
}

function listPaymentMethods(paymentsBytes: Buffer): Reply {
  return { body: paymentsBytes, contentType: JSON_TYPE };
}

function getProtocol(texts: Texts): Reply {
  return { body: texts().protocol, contentType: JSON_TYPE };
}

function getLlmsTxt(texts: Texts): Reply {
  return text(texts().llms);
}

function getRobotsTxt(): Reply {
  return text(
    `User-agent: *\nDisallow: /console\nDisallow: /checkout/\nDisallow: /carts/\nAllow: /\n`,
  );
}

function getAsyncApi(asyncApiBytes: () => Buffer): Reply {
  return { body: asyncApiBytes(), contentType: JSON_TYPE };
}

function getApiDocs(): Reply {
  return renderPage('api-docs', {
    title: 'API docs',
    main_class: 'api-docs',
    openapi_url: '/api/openapi.json',
    stylesheets: ['/api/docs/swagger-ui.css'],
    scripts: ['/api/docs/swagger-ui-bundle.js', '/static/api-docs.js'],
  });
}

/** A file of swagger-ui-dist, read once. */
function getDocAsset(
  assets: Map<string, Buffer>,
  { params }: PublicContext<DocAssetParams>,
): Reply {
  const name = params.asset as DocAsset;
  let b = assets.get(name);
  if (!b) assets.set(name, (b = fs.readFileSync(path.join(SWAGGER_DIR, name))));
  return {
    body: b,
    contentType: DOC_ASSETS[name],
    headers: { 'cache-control': 'public, max-age=86400' },
  };
}

/** GET /api/openapi.json over the finished route table (it documents itself out). */
export function openApiRoute(routes: Route[], s: Services): Route {
  const doc = once(() => Buffer.from(JSON.stringify(openApiDocument(routes, s.config.baseUrl))));
  return route({
    method: 'GET',
    path: '/api/openapi.json',
    auth: 'none',
    api: false,
    summary: 'OpenAPI 3.1 description',
    response: { 200: media('application/json', 'this document') },
    handler: () => getOpenApi(doc),
  });
}

function getOpenApi(doc: () => Buffer): Reply {
  return { body: doc(), contentType: 'application/json' };
}
