import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `signin-<user id>`: the shell-auth sign-ins of one e-mail address (the user id follows
 * from it, so the stream exists before the user does). A sign-in asks, for an address and an SSH
 * key, for a link sent to the address; following the link proves the address, binds the key and
 * lets one API key be made for it (POST /api/shell-auth/api-keys), within ten minutes.
 */
export type SignInRequested = DomainEvent<
  'SignInRequested',
  {
    /** The contract's `nonce`. */
    request_id: string;
    user_id: string;
    email: string;
    ssh_key_fingerprint: string;
    ssh_public_key: string;
    /** The client's free text for the e-mail (the CLI sends `vers login --git from <host>`). */
    note: string | null;
    /** The address the request came from, shown in the e-mail and on the confirmation page. */
    client_address: string | null;
    /**
     * SHA-256 of the link's token: only the link in the e-mail holds the token itself.
     * @redacted
     */
    token_sha256: string;
    requested_at: string;
    /** The link works until then (ten minutes). */
    expires_at: string;
  }
>;
/** The link was followed (and confirmed): the address is the user's, the key bound to them. Once only. */
export type SignInLinkFollowed = DomainEvent<'SignInLinkFollowed', { request_id: string; ssh_key_fingerprint: string; followed_at: string }>;
/** The API key the sign-in allowed was made: the sign-in is used up. */
export type SignInCompleted = DomainEvent<'SignInCompleted', { request_id: string; api_key_id: string; completed_at: string }>;
export type SignInEvent = SignInRequested | SignInLinkFollowed | SignInCompleted;
export const SIGN_IN_EVENT_TYPES = eventTypes<SignInEvent>()('SignInRequested', 'SignInLinkFollowed', 'SignInCompleted');
