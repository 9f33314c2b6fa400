// The discovery texts that name routes (manifest, agent protocol, /llms.txt, the docs' examples):
// built once over the finished route table (src/http/route-table.ts), so a text naming a path no
// route serves stops the start.
import type { Route } from '../http/route.js';
import type { Services } from '../http/services.js';
import { llmsTxt, manifest } from './manifest.js';
import { agentProtocol } from './protocol.js';
import { RoutePaths } from './route-paths.js';
import { agentExamples, developerExamples, eventExamples } from './examples.js';

/** The texts that name routes, built over the finished route table (`routes`). */
export function discoveryTexts(s: Services, routes: readonly Route[]) {
  const at = new RoutePaths(s.config.baseUrl, routes);
  const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));
  return {
    at,
    manifest: bytes(manifest(at, s.schema, s.config.timeScale, s.config.rateLimit)),
    protocol: bytes(agentProtocol(at)),
    llms: llmsTxt(at, s.config.timeScale, s.config.rateLimit),
    examples: {
      agents: agentExamples(at),
      developers: developerExamples(at),
      events: eventExamples(at),
    },
  };
}
