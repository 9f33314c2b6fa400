// The typed client's types are generated (npm run client:generate) and checked in: regenerating
// from the route table's OpenAPI document gives the checked-in src/client/schema.d.ts exactly.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { generateClientTypes, SCHEMA_FILE } from '../../src/client/generate.js';

t.test('src/client/schema.d.ts is what npm run client:generate makes', async (t) => {
  const fresh = await generateClientTypes();
  const checkedIn = readFileSync(SCHEMA_FILE, 'utf8');
  t.ok(
    fresh === checkedIn,
    'no diff: run `npm run client:generate` and commit src/client/schema.d.ts',
  );
  t.match(checkedIn, /create_order: \{/, 'operations named by their operationId');
});
