import type { Infrastructure } from '@arbor/application';
import type { AdminOutput } from './admin-output';

/**
 * `secrets …`: the orgs' data keys, which seal their secrets in the log (file contents, exec stdin
 * and env, env var values). Lists show ids and dates, never a key.
 */
export async function secretsCommand(infra: Infrastructure, args: string[], options: { org?: string; yes?: boolean }, out: AdminOutput): Promise<void> {
  const keys = infra.secrets.orgKeys;
  const [action] = args;
  switch (action) {
    case 'keys': {
      const listed = await keys.list(options.org);
      if (!listed.length) out.line(options.org ? `org ${options.org} has no data key (it has sealed nothing yet, or its keys were shredded)` : 'no data keys yet');
      for (const key of listed) out.line(`${key.org_id}  ${key.key_id}  created ${key.created_at}`);
      return;
    }
    case 'rotate': {
      const org_id = requireOrg(options);
      const key = await keys.rotate(org_id);
      out.line(`org ${org_id}: new data key ${key.key_id}; what is sealed from now on uses it, what was sealed before still opens with the older keys`);
      return;
    }
    case 'shred': {
      const org_id = requireOrg(options);
      if (!options.yes) throw new Error(`shredding deletes every data key of org ${org_id}: its secrets in the log (and in every copy of it) can never be read again. Add --yes to do it`);
      const shredded = await keys.shred(org_id);
      out.line(`org ${org_id}: deleted ${shredded.length} data key(s)${shredded.length ? ` (${shredded.join(', ')})` : ''}; what they sealed is unreadable for good`);
      out.line('copies of the key store made before now (backups of secret-keys.db or of the secret_keys collection) still hold them: delete those too');
      return;
    }
    default:
      throw new Error(`unknown command: secrets ${action ?? ''}`.trim());
  }
}

function requireOrg(options: { org?: string }): string {
  if (!options.org) throw new Error('--org <org id> is required');
  return options.org;
}
