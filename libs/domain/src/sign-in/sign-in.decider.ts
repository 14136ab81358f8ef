import { timingSafeEqual } from 'node:crypto';
import type { Decider } from '../shared/decider';
import { conflict, DomainError, RateLimitedError, unauthorized } from '../shared/domain-error';
import type { SignInCommand } from './sign-in.commands';
import type { SignInEvent, SignInRequested } from './sign-in.events';

/** At most this many sign-in e-mails to one address in SIGN_IN_WINDOW_MS (more: 429). */
export const SIGN_IN_EMAILS_PER_WINDOW = 5;
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
/** After the link is followed, the API key must be made within this (the CLI polls every 3 s). */
export const SIGN_IN_GRANT_MS = 10 * 60_000;
/** Requests older than this are forgotten by the state (they can do nothing any more). */
const KEPT_MS = 24 * 3_600_000;

export type SignInRequest = SignInRequested['data'] & {
  followed_at: string | null;
  completed_at: string | null;
};

export interface SignInState {
  /** Recent requests, oldest first. */
  requests: SignInRequest[];
}

/**
 * Where the latest sign-in of a key stands: `verified` (the link was followed, an API key may be
 * made), or why not. The reasons are the contract's 401 `reason`.
 */
export type SignInStatus =
  | { status: 'verified'; request: SignInRequest }
  | { status: 'none' | 'pending' | 'expired' | 'completed'; reason: string; request: SignInRequest | null };

const time = (iso: string) => Date.parse(iso);

export function signInStatusOf(state: SignInState, ssh_key_fingerprint: string, now: string): SignInStatus {
  const request = [...state.requests].reverse().find((r) => r.ssh_key_fingerprint === ssh_key_fingerprint) ?? null;
  if (!request) return { status: 'none', reason: 'no sign-in was started for this e-mail address and SSH key: start with POST /api/shell-auth', request };
  if (request.completed_at) return { status: 'completed', reason: 'this sign-in was used to make an API key already: start a new one', request };
  if (request.followed_at) {
    if (time(now) - time(request.followed_at) > SIGN_IN_GRANT_MS) return { status: 'expired', reason: 'this sign-in expired before an API key was made: start a new one', request };
    return { status: 'verified', request };
  }
  if (time(now) > time(request.expires_at)) return { status: 'expired', reason: 'the sign-in link expired before it was followed: start a new sign-in', request };
  return { status: 'pending', reason: 'waiting for the link in the e-mail to be followed', request };
}

/** The request a link's token belongs to, compared in constant time (the token itself is never stored). */
export function requestOfToken(state: SignInState, token_sha256: string): SignInRequest | null {
  const wanted = Buffer.from(token_sha256, 'hex');
  let found: SignInRequest | null = null;
  for (const request of state.requests) {
    const stored = Buffer.from(request.token_sha256, 'hex');
    if (stored.length === wanted.length && timingSafeEqual(stored, wanted)) found = request;
  }
  return found;
}

const update = (state: SignInState, request_id: string, change: Partial<SignInRequest>): SignInState => ({
  requests: state.requests.map((r) => (r.request_id === request_id ? { ...r, ...change } : r)),
});

export const signInDecider: Decider<SignInCommand, SignInState, SignInEvent> = {
  initialState: () => ({ requests: [] }),
  decide: (command, state) => {
    switch (command.type) {
      case 'RequestSignIn': {
        const recent = state.requests.filter((r) => time(command.now) - time(r.requested_at) < SIGN_IN_WINDOW_MS);
        if (recent.length >= SIGN_IN_EMAILS_PER_WINDOW) {
          const retry = Math.max(1, Math.ceil((time(recent[0].requested_at) + SIGN_IN_WINDOW_MS - time(command.now)) / 1000));
          throw new RateLimitedError(`too many sign-in e-mails to this address: try again in ${retry} s`, retry);
        }
        const { type: _, now, ...request } = command;
        return [{ type: 'SignInRequested', data: { ...request, requested_at: now } }];
      }
      case 'FollowSignInLink': {
        const request = requestOfToken(state, command.token_sha256);
        if (!request) throw new DomainError('not_found', 'this sign-in link is not valid');
        if (request.followed_at) throw conflict('this sign-in link was used already');
        if (time(command.now) > time(request.expires_at)) throw new DomainError('invalid', 'this sign-in link expired: start a new sign-in');
        return [{ type: 'SignInLinkFollowed', data: { request_id: request.request_id, ssh_key_fingerprint: request.ssh_key_fingerprint, followed_at: command.now } }];
      }
      case 'CompleteSignIn': {
        const status = signInStatusOf(state, command.ssh_key_fingerprint, command.now);
        if (status.status !== 'verified') throw unauthorized(status.reason);
        return [{ type: 'SignInCompleted', data: { request_id: status.request.request_id, api_key_id: command.api_key_id, completed_at: command.now } }];
      }
    }
  },
  evolve: (state, event) => {
    switch (event.type) {
      case 'SignInRequested': {
        const kept = state.requests.filter((r) => time(event.data.requested_at) - time(r.requested_at) < KEPT_MS);
        return { requests: [...kept, { ...event.data, followed_at: null, completed_at: null }] };
      }
      case 'SignInLinkFollowed':
        return update(state, event.data.request_id, { followed_at: event.data.followed_at });
      case 'SignInCompleted':
        return update(state, event.data.request_id, { completed_at: event.data.completed_at });
    }
  },
};
