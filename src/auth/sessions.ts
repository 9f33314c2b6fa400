// A holder's web session token is random; only its sha256 is stored (a leaked table opens no
// sessions). One definition for the holder actor, which stores it, and the front end, which looks
// the cookie's token up by it.
import { createHash } from 'node:crypto';

export const sessionTokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
