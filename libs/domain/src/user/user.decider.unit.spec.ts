import { deciderSpec } from '../testing/decider-spec';
import { aliasBaseOf, requireEmail, userIdOf } from './email-address';
import { userDecider } from './user.decider';
import type { UserEvent } from './user.events';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(userDecider);
const user_id = userIdOf('ada@example.com');
const registered: UserEvent = { type: 'UserRegistered', data: { user_id, email: 'ada@example.com', registered_at: now } };
const verified: UserEvent = { type: 'EmailVerified', data: { user_id, email: 'ada@example.com', verified_at: now } };

describe('user decider', () => {
  it('registers an invited user once, unverified', () => {
    spec.given([]).when({ type: 'RegisterUser', user_id, email: 'ada@example.com', now }).then([registered]);
    spec.given([registered]).when({ type: 'RegisterUser', user_id, email: 'ada@example.com', now }).then([]);
    spec.given([registered]).when({ type: 'RegisterUser', user_id, email: 'eve@example.com', now }).thenThrows('conflict');
  });

  it('a followed link verifies the address, registering the user first when they are new', () => {
    spec.given([]).when({ type: 'VerifyEmail', user_id, email: 'ada@example.com', now }).then([registered, verified]);
    spec.given([registered]).when({ type: 'VerifyEmail', user_id, email: 'ada@example.com', now }).then([verified]);
    spec.given([registered, verified]).when({ type: 'VerifyEmail', user_id, email: 'ada@example.com', now }).then([]);
  });
});

describe('e-mail addresses', () => {
  it('are trimmed and lowercased, or refused with a 400 that says why', () => {
    expect(requireEmail('  Ada.Lovelace@Example.COM ')).toBe('ada.lovelace@example.com');
    expect(() => requireEmail('ada@')).toThrow("email 'ada@' is not a valid e-mail address");
    expect(() => requireEmail('ada example.com')).toThrow('is not a valid e-mail address');
    expect(() => requireEmail('ada@localhost')).toThrow('is not a valid e-mail address');
    expect(() => requireEmail(42)).toThrow('email is required');
  });

  it('an alias names its base address', () => {
    expect(aliasBaseOf('ada+ci@example.com')).toBe('ada@example.com');
    expect(aliasBaseOf('ada+ci+x@example.com')).toBe('ada@example.com');
    expect(aliasBaseOf('ada@example.com')).toBeNull();
  });

  it("a user's id follows from the address", () => {
    expect(userIdOf('ada@example.com')).toBe(user_id);
    expect(userIdOf('eve@example.com')).not.toBe(user_id);
  });
});
