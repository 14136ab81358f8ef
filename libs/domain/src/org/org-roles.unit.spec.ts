import { DomainError } from '../shared/domain-error';
import { mayChange, requireMembershipChange, type Actor, type MembershipChange } from './org-roles';

const owner: Actor = { user_id: 'olga', role: 'owner' };
const admin: Actor = { user_id: 'adam', role: 'admin' };
const member: Actor = { user_id: 'mia', role: 'member' };

describe('the role rule', () => {
  it('a member changes what they own; owners and admins anything in the org', () => {
    expect(mayChange(member, 'mia')).toBe(true);
    expect(mayChange(member, 'olga')).toBe(false);
    expect(mayChange(member, null)).toBe(false);
    for (const actor of [owner, admin]) {
      expect(mayChange(actor, 'mia')).toBe(true);
      expect(mayChange(actor, null)).toBe(true);
    }
  });

  const refusal = (actor: Actor, change: MembershipChange) => {
    try {
      requireMembershipChange(actor, change);
      return null;
    } catch (error) {
      expect(error).toBeInstanceOf(DomainError);
      return (error as DomainError).kind;
    }
  };

  it('owners and admins manage members; only owners touch owners; anyone may leave', () => {
    expect(refusal(admin, { target_user_id: 'new', from: null, to: 'member' })).toBeNull();
    expect(refusal(admin, { target_user_id: 'mia', from: 'member', to: 'admin' })).toBeNull();
    expect(refusal(admin, { target_user_id: 'mia', from: 'member', to: 'owner' })).toBe('forbidden');
    expect(refusal(admin, { target_user_id: 'olga', from: 'owner', to: null })).toBe('forbidden');
    expect(refusal(owner, { target_user_id: 'mia', from: 'member', to: 'owner' })).toBeNull();
    expect(refusal(member, { target_user_id: 'new', from: null, to: 'member' })).toBe('forbidden');
    expect(refusal(member, { target_user_id: 'mia', from: 'member', to: 'admin' })).toBe('forbidden');
    expect(refusal(member, { target_user_id: 'mia', from: 'member', to: null })).toBeNull();
  });
});
