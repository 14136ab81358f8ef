import { Injectable } from '@nestjs/common';
import { AggregateRepository } from '@arbor/application';
import {
  invalid,
  parseSshPublicKey,
  requireEmail,
  SignIn,
  signInStatusOf,
  SshKey,
  SSH_KEY_TAKEN,
  unauthorized,
  userIdOf,
  type SignInRequest,
  type SignInStatus,
  type SshKeyBound,
  type SshPublicKey,
} from '@arbor/domain';

/** The e-mail address and SSH key a shell-auth body names, checked (400s that say what is wrong). */
export interface SignInSubject {
  email: string;
  user_id: string;
  key: SshPublicKey;
}

export function signInSubjectOf(body: { email?: unknown; ssh_public_key?: unknown }): SignInSubject {
  if (typeof body !== 'object' || body === null) throw invalid('the body must be a JSON object with email and ssh_public_key');
  const email = requireEmail(body.email);
  return { email, user_id: userIdOf(email), key: parseSshPublicKey(body.ssh_public_key) };
}

/** A sign-in whose link was followed, with the key bound to its account: it may make one API key. */
export interface VerifiedSignIn {
  request: SignInRequest;
  binding: SshKeyBound['data'];
}

/**
 * Where an address's sign-in with a key stands (the `signin-<user>` stream) and whether the key
 * is bound to that account (`sshkey-<hash>`): what verify-key answers and api-keys requires.
 */
@Injectable()
export class SignInLookup {
  constructor(private readonly aggregates: AggregateRepository) {}

  async status(subject: SignInSubject): Promise<SignInStatus> {
    const { state } = await this.aggregates.load(SignIn, subject.user_id);
    return signInStatusOf(state, subject.key.fingerprint, new Date().toISOString());
  }

  /** The verified sign-in, or a 401 with the contract's reason. */
  async verified(subject: SignInSubject): Promise<VerifiedSignIn> {
    const status = await this.status(subject);
    if (status.status !== 'verified') throw unauthorized(status.reason);
    const binding = (await this.aggregates.load(SshKey, subject.key.fingerprint_hex)).state.binding;
    if (binding?.user_id !== subject.user_id) throw unauthorized(SSH_KEY_TAKEN);
    return { request: status.request, binding };
  }
}
