import { createCredentials, type SimCredentials, type VerificationKeys } from '../credentials';

let cached: Promise<{ credentials: SimCredentials; keys: VerificationKeys }> | undefined;

/** One generated credential set per test file (key generation takes a moment). */
export function testCredentials(): Promise<{ credentials: SimCredentials; keys: VerificationKeys }> {
  cached ??= createCredentials();
  return cached;
}

/** The same credentials with every secret freshly generated (a "wrong key"). */
export function otherCredentials(): Promise<{ credentials: SimCredentials; keys: VerificationKeys }> {
  return createCredentials();
}
