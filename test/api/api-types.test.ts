// The CLI's types for the API (src/cli/api-types.ts) are generated from the document a daemon
// serves, so the CLI cannot drift from the API: a change to a route that the file does not
// reflect fails here. `npx vitest run test/api/api-types.test.ts -u` writes it anew.
import openapiTS from 'openapi-typescript';
import { expect, it } from 'vitest';
import { api, startGateway } from '../helpers/app.js';

const HEADER = `// Generated from /openapi.json by openapi-typescript (test/api/api-types.test.ts); do not edit.
// \`npx vitest run test/api/api-types.test.ts -u\` writes it anew after a change to the API.
`;

it('src/cli/api-types.ts is what openapi-typescript makes of the served document', async () => {
  const gw = await startGateway();
  const doc = (await api(gw.url, 'GET', '/openapi.json')).body;
  const types = await openapiTS(doc as never, { exportType: true });
  await expect(HEADER + types).toMatchFileSnapshot('../../src/cli/api-types.ts');
});
