import type { DomainCommand } from '../shared/decider';
import type { SignInRequested } from './sign-in.events';

export type RequestSignIn = DomainCommand<'RequestSignIn', Omit<SignInRequested['data'], 'requested_at'> & { now: string }>;
export type FollowSignInLink = DomainCommand<'FollowSignInLink', { token_sha256: string; now: string }>;
export type CompleteSignIn = DomainCommand<'CompleteSignIn', { ssh_key_fingerprint: string; api_key_id: string; now: string }>;
export type SignInCommand = RequestSignIn | FollowSignInLink | CompleteSignIn;
