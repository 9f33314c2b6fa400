// ReceiptsActor's messages and replies ("receipts:keys"): the signing keys of the approval receipts
// (CONTRACT.md "Signed approval receipts"), and the JWKS read task's reply.
import { actorRef } from '../runtime/protocol.js';

export type ReceiptsMessage =
  /** Makes the first key when there is none (every start asks: two processes starting together make one). */
  | { kind: 'ensureKey' }
  /** A new key signs from now on; the old public keys stay in the JWKS. */
  | { kind: 'rotate' };
export type KeyReady = { kid: string; created: boolean };

export type ReceiptsReplies = { ensureKey: KeyReady; rotate: KeyReady };
/** The one ReceiptsActor's address. */
export const receiptsRef = actorRef<ReceiptsMessage, ReceiptsReplies>('receipts', 'keys');

/** A public key as the JWKS serves it (RFC 7517; OKP Ed25519). */
export type PublicJwk = {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
};
export type Jwks = { keys: PublicJwk[] };

/** The approval a receipt records: the holder present (purchase link, cart link, the console), or a standing grant (an execute checkout). */
export type Approval = 'holder' | 'standing';
