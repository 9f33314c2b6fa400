// Signing a holder in (register or log in): the two forms' fields and the words a person reads when
// one is wrong, and the one way in through the holder's actor, for /register, /login and a cart
// link's inline sign-in.
import Type, { type Static } from 'typebox';
import { holderRef, type HolderSession } from '../../actors/holder/messages.js';
import type { IdemTicket } from '../../actors/runtime/client.js';
import { HttpError, type RequestInfo } from '../http/route.js';
import type { Services } from '../http/services.js';
import { compileFormValidator } from '../http/validation.js';
import { DEFAULT_NEXT } from './answers.js';

const Email = Type.String({
  pattern: '^[^@\\s]+@[^@\\s]+$',
  maxLength: 254,
  description: 'e-mail address',
});
export const Next = Type.String({
  default: DEFAULT_NEXT,
  description: 'page to go to afterwards (a path of this site)',
});

export const RegisterForm = Type.Object({
  email: Email,
  password: Type.String({ minLength: 8, maxLength: 1024 }),
  password2: Type.String({
    maxLength: 1024,
    default: '',
    description: 'repeat of password; must match when given',
  }),
  display_name: Type.String({ maxLength: 120, default: '' }),
  next: Next,
});
export type RegisterForm = Static<typeof RegisterForm>;

export const LoginForm = Type.Object({
  email: Email,
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  next: Next,
});
export type LoginForm = Static<typeof LoginForm>;

/** What a person reads when a field is wrong. */
export const WORDS = {
  email: 'enter your e-mail address (it contains @)',
  password: 'a password has at least 8 characters',
  password2: 'the two passwords differ',
  display_name: 'a display name has at most 120 characters',
};

export type FormName = 'login' | 'register';

export type SignInFields = {
  email: string;
  password: string;
  password2?: string;
  display_name?: string;
};

/**
 * Registers or logs in through the holder's actor, whose turns hash and check the password and keep
 * the throttles: the one way in, for /register, /login and a cart link's inline sign-in.
 */
export function signIn(
  s: Services,
  req: RequestInfo,
  how: FormName,
  f: SignInFields,
  idem?: IdemTicket,
): Promise<HolderSession> {
  const email = f.email.toLowerCase();
  const address = req.remoteAddress();
  if (how === 'login')
    return s.runtime.ask(
      holderRef(email),
      { kind: 'login', email, password: f.password, address },
      { idem },
    );
  if (f.password2 && f.password2 !== f.password) {
    throw new HttpError(422, [
      { loc: ['body', 'password2'], msg: 'Passwords do not match', type: 'value_error' },
    ]);
  }
  return s.runtime.ask(
    holderRef(email),
    {
      kind: 'register',
      email,
      password: f.password,
      display_name: (f.display_name ?? '').trim(),
      address,
    },
    { idem },
  );
}

const inlineForms = {
  register: compileFormValidator(RegisterForm)!,
  login: compileFormValidator(LoginForm)!,
};

/**
 * Sign-in fields typed into another form (a cart link's pay form): checked by the same rules as the
 * /register and /login forms (422 at the field otherwise), then `signIn`.
 */
export function signInInline(
  s: Services,
  req: RequestInfo,
  how: FormName,
  raw: SignInFields,
): Promise<HolderSession> {
  const fields = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== ''));
  const checked = inlineForms[how]({ ...fields, next: DEFAULT_NEXT });
  if (!checked.ok) throw new HttpError(422, checked.issues);
  return signIn(s, req, how, checked.value as SignInFields);
}
