import { deciderSpec } from '../testing/decider-spec';
import { RateLimitedError } from '../shared/domain-error';
import { generateSignInToken, parseSignInToken } from './sign-in-token';
import { SIGN_IN_WINDOW_MS, signInDecider, signInStatusOf } from './sign-in.decider';
import type { SignInEvent } from './sign-in.events';

const spec = deciderSpec(signInDecider);
const at = (minutes: number) => new Date(Date.parse('2026-11-24T10:00:00.000Z') + minutes * 60_000).toISOString();
const user_id = '11111111-1111-4111-8111-111111111111';
const { token, token_sha256 } = generateSignInToken(user_id);
const ask = (request_id: string, minutes: number, fingerprint = 'SHA256:key', sha = token_sha256) => ({
  type: 'RequestSignIn' as const,
  request_id,
  user_id,
  email: 'ada@example.com',
  ssh_key_fingerprint: fingerprint,
  ssh_public_key: 'ssh-ed25519 AAAA',
  note: 'vers login --git from laptop',
  client_address: '127.0.0.1',
  token_sha256: sha,
  expires_at: at(minutes + 10),
  now: at(minutes),
});
const requested = (request_id: string, minutes: number, fingerprint?: string, sha?: string): SignInEvent => {
  const { type: _, now, ...data } = ask(request_id, minutes, fingerprint, sha);
  return { type: 'SignInRequested', data: { ...data, requested_at: now } };
};
const followed = (request_id: string, minutes: number): SignInEvent => ({ type: 'SignInLinkFollowed', data: { request_id, ssh_key_fingerprint: 'SHA256:key', followed_at: at(minutes) } });
const fold = (events: SignInEvent[]) => events.reduce(signInDecider.evolve, signInDecider.initialState());

describe('sign-in decider: a link per request, followed once, one API key per followed link', () => {
  it('records a request', () => {
    spec.given([]).when(ask('r1', 0)).then([requested('r1', 0)]);
  });

  it('sends at most five e-mails to an address in fifteen minutes, and says when to try again', () => {
    const five = [0, 1, 2, 3, 4].map((m) => requested(`r${m}`, m, 'SHA256:key', generateSignInToken(user_id).token_sha256));
    spec.given(five).when(ask('r5', 5)).thenThrows('rate_limited', 'too many sign-in e-mails to this address: try again in 600 s');
    try {
      signInDecider.decide(ask('r5', 5), fold(five));
    } catch (error) {
      expect((error as RateLimitedError).retry_after_seconds).toBe(600);
    }
    spec.given(five).when(ask('r5', SIGN_IN_WINDOW_MS / 60_000)).then([requested('r5', 15)]);
  });

  it('the link is followed once, within ten minutes, found by its token alone', () => {
    const parsed = parseSignInToken(token)!;
    expect(parsed).toEqual({ user_id, token_sha256 });
    spec.given([requested('r1', 0)]).when({ type: 'FollowSignInLink', token_sha256: parsed.token_sha256, now: at(9) }).then([followed('r1', 9)]);
    spec.given([requested('r1', 0), followed('r1', 9)]).when({ type: 'FollowSignInLink', token_sha256, now: at(9) }).thenThrows('conflict', 'this sign-in link was used already');
    spec.given([requested('r1', 0)]).when({ type: 'FollowSignInLink', token_sha256, now: at(11) }).thenThrows('invalid', /expired/);
    spec.given([requested('r1', 0)]).when({ type: 'FollowSignInLink', token_sha256: generateSignInToken(user_id).token_sha256, now: at(1) }).thenThrows('not_found', 'this sign-in link is not valid');
    expect(parseSignInToken(`${user_id}.short`)).toBeNull();
  });

  it('a followed link allows one API key, for its SSH key, within ten minutes of following it', () => {
    const events = [requested('r1', 0), followed('r1', 2)];
    const completed: SignInEvent = { type: 'SignInCompleted', data: { request_id: 'r1', api_key_id: 'k1', completed_at: at(3) } };
    spec.given(events).when({ type: 'CompleteSignIn', ssh_key_fingerprint: 'SHA256:key', api_key_id: 'k1', now: at(3) }).then([completed]);
    spec.given([...events, completed]).when({ type: 'CompleteSignIn', ssh_key_fingerprint: 'SHA256:key', api_key_id: 'k2', now: at(3) }).thenThrows('unauthorized', /used to make an API key already/);
    spec.given(events).when({ type: 'CompleteSignIn', ssh_key_fingerprint: 'SHA256:other', api_key_id: 'k1', now: at(3) }).thenThrows('unauthorized', /no sign-in was started/);
    spec.given(events).when({ type: 'CompleteSignIn', ssh_key_fingerprint: 'SHA256:key', api_key_id: 'k1', now: at(13) }).thenThrows('unauthorized', /expired/);
    spec.given([requested('r1', 0)]).when({ type: 'CompleteSignIn', ssh_key_fingerprint: 'SHA256:key', api_key_id: 'k1', now: at(1) }).thenThrows('unauthorized', 'waiting for the link in the e-mail to be followed');
  });

  it("the latest request of a key says where the key's sign-in stands", () => {
    const state = fold([requested('r1', 0), followed('r1', 1), requested('r2', 2, 'SHA256:key', generateSignInToken(user_id).token_sha256)]);
    expect(signInStatusOf(state, 'SHA256:key', at(3)).status).toBe('pending');
    expect(signInStatusOf(state, 'SHA256:key', at(13)).status).toBe('expired');
  });
});
