import { deciderSpec } from '../testing/decider-spec';
import { parseSshPublicKey } from './ssh-public-key';
import { sshKeyDecider } from './ssh-key.decider';
import type { SshKeyEvent } from './ssh-key.events';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(sshKeyDecider);
const ED25519 = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@laptop';
const key = parseSshPublicKey(ED25519);
const binding = { key_id: 'k-1', fingerprint: key.fingerprint, public_key: key.public_key, user_id: 'user-ada', email: 'ada@example.com' };
const bound: SshKeyEvent = { type: 'SshKeyBound', data: { ...binding, bound_at: now } };

describe('ssh key decider: a key belongs to one account', () => {
  it('binds a free key; the same account again changes nothing; another account gets a 409', () => {
    spec.given([]).when({ type: 'BindSshKey', ...binding, now }).then([bound]);
    spec.given([bound]).when({ type: 'BindSshKey', ...binding, key_id: 'k-2', now }).then([]);
    spec.given([bound]).when({ type: 'BindSshKey', ...binding, user_id: 'user-eve', email: 'eve@example.com', now }).thenThrows('conflict', 'this SSH key is bound to another e-mail address');
  });

  it('an unbound key is free again', () => {
    const unbound: SshKeyEvent = { type: 'SshKeyUnbound', data: { key_id: 'k-1', fingerprint: key.fingerprint, user_id: 'user-ada', unbound_at: now } };
    spec.given([bound]).when({ type: 'UnbindSshKey', now }).then([unbound]);
    spec.given([bound, unbound]).when({ type: 'BindSshKey', ...binding, user_id: 'user-eve', email: 'eve@example.com', now }).then([{ type: 'SshKeyBound', data: { ...binding, user_id: 'user-eve', email: 'eve@example.com', bound_at: now } }]);
    spec.given([]).when({ type: 'UnbindSshKey', now }).thenThrows('not_found');
  });
});

describe('ssh public keys', () => {
  it('are kept without their comment and fingerprinted as ssh-keygen -l prints them', () => {
    expect(key).toEqual({
      public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl',
      fingerprint: 'SHA256:+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU',
      fingerprint_hex: Buffer.from('+DiY3wvvV6TuJJhbpZisF/zLDA0zPMSvHdkr4UvCOqU', 'base64').toString('hex'),
    });
  });

  it('anything else is a 400 that says what is wrong', () => {
    expect(() => parseSshPublicKey('')).toThrow('ssh_public_key is required');
    expect(() => parseSshPublicKey('not a key')).toThrow('is not an OpenSSH public key');
    expect(() => parseSshPublicKey('ssh-ed25519 AAAAB3NzaC1yc2E')).toThrow('is not an OpenSSH public key');
    expect(() => parseSshPublicKey(`${ED25519}\n${ED25519}`)).toThrow('must be one OpenSSH public key line');
  });
});
