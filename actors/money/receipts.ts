// Signed approval receipts (CONTRACT.md "Signed approval receipts"): when the holder's hand or
// standing grant funds orders, the money kernel signs what was approved as a compact JWS (EdDSA,
// Ed25519) with the newest key of `signing_key`, whose public half GET /.well-known/jwks.json
// publishes with every older one (rotation: a new key signs, old receipts still verify). jose does
// the crypto; nothing here is hand-written signing.
import { randomUUID, createHmac } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { SignJWT, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { centsToNumber } from '../../src/engine/money.js';
import { instantSql } from '../runtime/sql.js';
import type { Approval, Jwks, KeyReady, PublicJwk } from '../receipts/messages.js';

const ALG = 'EdDSA';
const LOCK = 'svc:signing_key';

type Signer = { kid: string; key: CryptoKey | Uint8Array; salt: string };
let signer: Signer | undefined;

/**
 * Makes a key when there is none (`rotate`: always), under a lock: two processes starting together
 * make one. It is made at `at` (the turn's instant), and after every older key even when the clock
 * has not moved since (a test's clock): the newest key is the one that signs.
 */
export async function makeKey(em: EntityManager, rotate: boolean, at: number): Promise<KeyReady> {
  await em.execute('select pg_advisory_xact_lock(hashtext(?))', [LOCK]);
  if (!rotate) {
    const [have] = await em.execute<{ kid: string }[]>(
      'select kid from signing_key order by created_at desc, kid desc limit 1',
    );
    if (have) return { kid: have.kid, created: false };
  }
  const { publicKey, privateKey } = await generateKeyPair(ALG, {
    crv: 'Ed25519',
    extractable: true,
  });
  const kid = randomUUID();
  await em.execute(
    `insert into signing_key (kid, public_jwk, private_jwk, created_at)
     select ?, ?::jsonb, ?::jsonb, greatest(${instantSql()}, max(created_at) + interval '1 millisecond') from signing_key`,
    [
      kid,
      JSON.stringify(await exportJWK(publicKey)),
      JSON.stringify(await exportJWK(privateKey)),
      at,
    ],
  );
  signer = undefined;
  return { kid, created: true };
}

/** Every key's public half, newest first. */
export async function jwks(em: EntityManager): Promise<Jwks> {
  const rows = await em.execute<{ kid: string; public_jwk: JWK }[]>(
    'select kid, public_jwk from signing_key order by created_at desc, kid desc limit 100',
  );
  return {
    keys: rows.map(
      (r) =>
        ({
          kty: 'OKP',
          crv: 'Ed25519',
          x: r.public_jwk.x!,
          kid: r.kid,
          alg: ALG,
          use: 'sig',
        }) satisfies PublicJwk,
    ),
  };
}

/**
 * The newest key, and the oldest key's secret as the salt of holders' opaque ids (stable across
 * rotations). Which key is newest is read at every signature (one indexed row: a rotation signs
 * from the next receipt on, in every worker); the key is imported only when it changed.
 */
async function currentSigner(em: EntityManager): Promise<Signer> {
  const [newest] = await em.execute<{ kid: string }[]>(
    'select kid from signing_key order by created_at desc, kid desc limit 1',
  );
  if (!newest)
    throw new Error('no signing key: the service makes one at start (receipts:keys ensureKey)');
  if (signer?.kid === newest.kid) return signer;
  const [row] = await em.execute<{ private_jwk: JWK; salt: string }[]>(
    `select private_jwk, (select private_jwk->>'d' from signing_key order by created_at, kid limit 1) as salt from signing_key where kid = ?`,
    [newest.kid],
  );
  signer = { kid: newest.kid, key: await importJWK(row.private_jwk, ALG), salt: row.salt };
  return signer;
}

/** What a receipt records of the funding. */
export type ReceiptFacts = {
  /** The service's public address (`iss`). */
  issuer: string;
  /** When it was approved, on the service clock (real unix seconds): `iat`. */
  at: number;
  approval: Approval;
  agentId: number | null;
  holderId: number;
  orders: { id: number; market: string; offer_key: string; qty: number; total_cents: number }[];
  chargedCents: number;
  feeCents: number;
  method: 'card' | 'balance';
};

/** The receipt, a compact JWS. */
export async function signReceipt(em: EntityManager, f: ReceiptFacts): Promise<string> {
  const s = await currentSigner(em);
  const holder = `h_${createHmac('sha256', s.salt).update(`holder:${f.holderId}`).digest('base64url').slice(0, 22)}`;
  return new SignJWT({
    orders: f.orders.map((o) => ({
      id: o.id,
      market: o.market,
      offer_key: o.offer_key,
      qty: o.qty,
      total_amount: centsToNumber(o.total_cents),
    })),
    // `fee` is the month's participation fee this payment carried; `participation_fee` says so by name (CONTRACT.md).
    charged: centsToNumber(f.chargedCents),
    fee: centsToNumber(f.feeCents),
    participation_fee: centsToNumber(f.feeCents),
    currency: 'USD',
    method: f.method,
    approval: f.approval,
    agent_id: f.agentId,
    holder,
  })
    .setProtectedHeader({ alg: ALG, kid: s.kid, typ: 'JWT' })
    .setIssuer(f.issuer)
    .setIssuedAt(Math.floor(f.at))
    .setJti(randomUUID())
    .sign(s.key);
}
