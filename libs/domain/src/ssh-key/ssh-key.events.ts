import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `sshkey-<SHA-256 of the key, hex>`: an SSH public key and the account it belongs to.
 * A key belongs to one account at a time (the stream is its reservation); it is bound when a
 * sign-in link sent to the account's address is followed, so the binding is verified.
 */
export type SshKeyBound = DomainEvent<
  'SshKeyBound',
  {
    /** The binding's id: the contract's `key_id` of the shell-auth answers. */
    key_id: string;
    /** `SHA256:<base64>`, as `ssh-keygen -l` prints it. */
    fingerprint: string;
    /** `<type> <base64>`, without a comment. */
    public_key: string;
    user_id: string;
    email: string;
    bound_at: string;
  }
>;
/** An operator unbound the key (`npm run arbor -- users unbind-key`): another account may bind it. */
export type SshKeyUnbound = DomainEvent<'SshKeyUnbound', { key_id: string; fingerprint: string; user_id: string; unbound_at: string }>;
export type SshKeyEvent = SshKeyBound | SshKeyUnbound;
export const SSH_KEY_EVENT_TYPES = eventTypes<SshKeyEvent>()('SshKeyBound', 'SshKeyUnbound');
