// The approval receipts' public keys (CONTRACT.md "Signed approval receipts"): anyone verifies a
// receipt against them (jose: createRemoteJWKSet + jwtVerify); old keys stay after a rotation.
import Type from 'typebox';
import { read } from '../../../actors/runtime/client.js';
import { json, route, type Reply, type Route } from '../../http/route.js';
import { list, obj, str } from '../../schemas/index.js';
import type { Services } from '../../http/services.js';

const Jwk = obj(
  {
    kty: Type.Literal('OKP', { description: 'octet key pair' }),
    crv: Type.Literal('Ed25519', { description: 'the curve' }),
    x: str('the public key (base64url)'),
    kid: str("the key id a receipt's header names"),
    alg: Type.Literal('EdDSA', { description: 'the algorithm' }),
    use: Type.Literal('sig', { description: 'signing' }),
  },
  'a public key',
);
const JwksAnswer = obj(
  { keys: list(Jwk, 'every signing key, newest first') },
  "the approval receipts' public keys (JWKS, RFC 7517)",
);

export function receiptRoutes(s: Services): Route[] {
  return [
    route({
      method: 'GET',
      path: '/.well-known/jwks.json',
      operationId: 'get_jwks',
      api: true,
      auth: 'none',
      summary: 'The public keys that verify approval receipts (JWKS)',
      response: { 200: JwksAnswer },
      handler: () => getJwks(s),
    }),
  ];
}

async function getJwks(s: Services): Promise<Reply> {
  return {
    ...json(await read(s.runtime, 'receipts.jwks', {})),
    headers: { 'cache-control': 'public, max-age=300' },
  };
}
