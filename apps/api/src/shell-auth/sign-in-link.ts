import type { AggregateRepository } from '@arbor/application';
import { parseSignInToken, requestOfToken, SignIn, type SignInRequest } from '@arbor/domain';
import type { SignInPage } from './sign-in-page';

/** A sign-in link's token, and the request it belongs to (null: no request has it). */
export interface SignInLink {
  token: string;
  token_sha256: string;
  request: SignInRequest | null;
}

export async function signInLinkOf(aggregates: AggregateRepository, token: unknown): Promise<SignInLink> {
  const parsed = parseSignInToken(token);
  if (!parsed) return { token: String(token ?? ''), token_sha256: '', request: null };
  const { state } = await aggregates.load(SignIn, parsed.user_id);
  return { token: token as string, token_sha256: parsed.token_sha256, request: requestOfToken(state, parsed.token_sha256) };
}

const START_AGAIN = 'Start a new sign-in from your terminal (vers login --git).';

/**
 * The page a link shows as it stands: not valid (404), used already (409), expired (410), or
 * what is being confirmed, with the button that confirms it (200).
 */
export function linkPage(link: SignInLink, now: Date = new Date()): SignInPage {
  const request = link.request;
  if (!request) return { status: 404, title: 'This sign-in link is not valid', paragraphs: ['The link may be cut short: open the whole link from the e-mail.', START_AGAIN] };
  if (request.followed_at) {
    return { status: 409, title: 'This sign-in link was used already', paragraphs: [`It was confirmed at ${request.followed_at}; if that was you, you are signed in.`, START_AGAIN] };
  }
  if (now.getTime() > Date.parse(request.expires_at)) return { status: 410, title: 'This sign-in link expired', paragraphs: [`It worked until ${request.expires_at}.`, START_AGAIN] };
  const facts: [string, string][] = [
    ['Account', request.email],
    ['SSH key', request.ssh_key_fingerprint],
    ...(request.note ? [['Request', request.note] as [string, string]] : []),
    ['From', request.client_address ?? 'unknown'],
    ['Link works until', request.expires_at],
  ];
  return {
    status: 200,
    title: 'Confirm your sign-in to Arbor',
    paragraphs: ['Confirm only if you asked for this yourself, from your terminal: confirming lets the SSH key below get an API key of your account.'],
    facts,
    confirm_token: link.token,
  };
}
