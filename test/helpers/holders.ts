// A holder's side of the web for API tests: register (cookie session) and pay purchase links, as a
// script does it (urlencoded forms, `Accept: application/json`).
import type { TestService } from './service.js';
import type { Answer } from './agents.js';

export type TestHolder = {
  cookie: string;
  email: string;
  form: (path: string, fields: Record<string, string>) => Promise<Answer>;
  pay: (purchaseUrl: string, fields?: Record<string, string>) => Promise<Answer>;
};

export const APPROVED_CARD = {
  method: 'new_card',
  number: '4242 4242 4242 4242',
  exp: '12/39',
  cvc: '123',
  holder: 'Test Holder',
};

export async function submit(
  svc: TestService,
  path: string,
  /** A field per key, or [name, value] pairs (a field sent once per ticked choice). */
  fields: Record<string, string> | [string, string][],
  cookie?: string,
): Promise<Answer> {
  const res = await svc.get(path, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      ...(cookie ? { cookie } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

let n = 0;

export async function registerHolder(
  svc: TestService,
  email = `holder${process.pid}-${++n}@example.org`,
): Promise<TestHolder> {
  const r = await submit(svc, '/register', {
    email,
    password: 'correct horse battery',
    password2: 'correct horse battery',
    display_name: 'Holder',
  });
  if (r.status !== 200) throw new Error(`holder register: ${r.status} ${JSON.stringify(r.body)}`);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0];
  return {
    cookie,
    email,
    form: (path, fields) => submit(svc, path, fields, cookie),
    pay: (purchaseUrl, fields = APPROVED_CARD) =>
      submit(svc, `${new URL(purchaseUrl).pathname}/pay`, fields, cookie),
  };
}
