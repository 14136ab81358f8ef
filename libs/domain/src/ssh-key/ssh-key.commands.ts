import type { DomainCommand } from '../shared/decider';
import type { SshKeyBound } from './ssh-key.events';

export type BindSshKey = DomainCommand<'BindSshKey', Omit<SshKeyBound['data'], 'bound_at'> & { now: string }>;
export type UnbindSshKey = DomainCommand<'UnbindSshKey', { now: string }>;
export type SshKeyCommand = BindSshKey | UnbindSshKey;
