import { parseArgs } from 'node:util';
import type { Infrastructure } from '@arbor/application';
import type { AdminOutput } from './admin-output';
import { secretsCommand } from './secrets-commands';
import { sshKeysCommand } from './ssh-key-commands';

export const ADMIN_USAGE = `usage: npm run admin -- <command>
  secrets keys [--org <org id>]        the orgs' data keys (ids and dates, never a key)
  secrets rotate --org <org id>        a new data key for the org's secrets from now on
  secrets shred --org <org id> --yes   delete every data key of the org: its secrets in the log become unreadable for good
  ssh-keys list                        the SSH key generations, and how many VMs have a key of each
  ssh-keys rotate                      start a new generation: new VMs get their key from it
  ssh-keys rekey [--vm <vm id>]        give running VMs a key of the current generation (all of an older one, or one)
  ssh-keys retire <generation> [--force]  delete an old generation's secret (refused while VMs still have its key)`;

/** One operator command on the installation's stores; throws with a message saying what is wrong. */
export async function runAdmin(argv: string[], infra: Infrastructure, out: AdminOutput): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { org: { type: 'string' }, vm: { type: 'string' }, yes: { type: 'boolean' }, force: { type: 'boolean' } },
  });
  const [group, ...rest] = positionals;
  switch (group) {
    case 'secrets':
      return secretsCommand(infra, rest, values, out);
    case 'ssh-keys':
      return sshKeysCommand(infra, rest, values, out);
    default:
      throw new Error(ADMIN_USAGE);
  }
}
