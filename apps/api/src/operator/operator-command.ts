import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { AggregateRepository, directRunner, Identity, newCommandContext, stepContext, type Infrastructure } from '@arbor/application';
import { ApiKey, invalid, isRole, notFound, OrgName, requireEmail, SshKey, User, userIdOf, type Role } from '@arbor/domain';
import {
  API_KEYS_COLLECTION,
  ORGS_COLLECTION,
  SSH_KEYS_COLLECTION,
  USERS_COLLECTION,
  type ApiKeyDocument,
  type OrgDocument,
  type SshKeyDocument,
  type UserDocument,
} from '@arbor/read-models';

export const OPERATOR_USAGE = `usage: npm run arbor -- <command>

  keys list [--org <name>]                                   every key (of one org), revoked ones too
  keys create --org <name> --email <address> --label <label> a key of a member; printed once
  keys revoke <api_key_id>                                   every api process refuses it within a second
  orgs list
  orgs create <name> --owner <address>                       a new org, the address its owner
  orgs members <name>
  orgs add-member <name> <address> [--role member|admin|owner]
  users list
  users unbind-key <SHA256:fingerprint>                      frees an SSH key for another address

Lists come from the read models (the projector's); changes are appended to the log at once.`;

/** What the command prints: lines of text. */
export type Print = (line: string) => void;

/** Rows as aligned columns under a header. */
function table(print: Print, header: string[], rows: (string | null)[][]): void {
  const cells = [header, ...rows.map((row) => row.map((cell) => cell ?? '-'))];
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  for (const row of cells) print(row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}

/**
 * `npm run arbor -- keys|orgs|users …`: an operator on the host manages people, orgs and keys
 * through the same deciders as the api (Identity), as nobody's key (`actor_key_id` null), with the
 * installation's own configuration. A wrong command or argument throws a DomainError saying so.
 */
export async function runOperatorCommand(argv: string[], infra: Infrastructure, print: Print): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { org: { type: 'string' }, email: { type: 'string' }, label: { type: 'string' }, owner: { type: 'string' }, role: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [area, action, ...rest] = positionals;
  const aggregates = new AggregateRepository(infra.eventStore);
  const identity = new Identity(directRunner(aggregates), aggregates, infra.readModels);
  const readModels = infra.readModels;

  const orgIdOf = async (name: string | undefined): Promise<string> => {
    if (!name) throw invalid('--org <name> is required');
    const org_id = (await aggregates.load(OrgName, name)).state.org_id;
    if (!org_id) throw notFound(`org ${name}`);
    return org_id;
  };
  const argument = (what: string) => {
    if (!rest[0]) throw invalid(`${what} is required\n\n${OPERATOR_USAGE}`);
    return rest[0];
  };
  const emails = async () => new Map((await readModels.find<UserDocument>(USERS_COLLECTION, {})).map((user) => [user.user_id, user.email ?? '(admin)']));
  const orgNames = async () => new Map((await readModels.find<OrgDocument>(ORGS_COLLECTION, {})).map((org) => [org.org_id, org.name]));

  switch (`${area ?? ''} ${action ?? ''}`) {
    case 'keys list': {
      const filter = values.org ? { org_id: await orgIdOf(values.org) } : {};
      const keys = await readModels.find<ApiKeyDocument>(API_KEYS_COLLECTION, filter, { sort: { created_at: 1, _id: 1 } });
      const [users, orgs] = await Promise.all([emails(), orgNames()]);
      table(
        print,
        ['API_KEY_ID', 'ORG', 'USER', 'LABEL', 'CREATED', 'LAST_USED', 'REVOKED'],
        keys.map((key) => [key.key_id, orgs.get(key.org_id) ?? key.org_id, users.get(key.user_id) ?? key.user_id, key.label, key.created_at, key.last_used_at, key.revoked_at]),
      );
      return;
    }
    case 'keys create': {
      const org_id = await orgIdOf(values.org);
      if (!values.email) throw invalid('--email <address> is required');
      const user_id = userIdOf(requireEmail(values.email));
      if (!(await identity.roleOf(org_id, user_id))) throw invalid(`${values.email} is not a member of ${values.org}: add them first (orgs add-member)`);
      const issued = await identity.issueKey({ org_id, user_id, label: values.label ?? '' }, newCommandContext({ org_id, actor_key_id: null }));
      print(`API key ${issued.api_key_id} of ${values.email} in ${values.org} (shown this once; only its hash is kept):`);
      print(issued.api_key);
      return;
    }
    case 'keys revoke': {
      const key_id = argument('<api_key_id>');
      const { state } = await aggregates.load(ApiKey, key_id);
      if (!state.key) throw notFound(`API key ${key_id}`);
      await identity.revokeKey(key_id, newCommandContext({ org_id: state.key.org_id, actor_key_id: null }));
      print(`API key ${key_id} is revoked${state.status === 'revoked' ? ' (it was already)' : ''}`);
      return;
    }
    case 'orgs list': {
      const orgs = await readModels.find<OrgDocument>(ORGS_COLLECTION, {}, { sort: { created_at: 1, _id: 1 } });
      table(print, ['ORG_ID', 'NAME', 'CREATED'], orgs.map((org) => [org.org_id, org.name, org.created_at]));
      return;
    }
    case 'orgs create': {
      const name = argument('<name>');
      if (!values.owner) throw invalid('--owner <address> is required');
      const org_id = randomUUID();
      const context = newCommandContext({ org_id, actor_key_id: null });
      const owner = await identity.registerUser(requireEmail(values.owner), context);
      const org = await identity.createOrg(name, owner, context, org_id);
      print(`org ${org.name} (${org.org_id}) created, ${values.owner} its owner: they sign in with \`vers login --git\``);
      return;
    }
    case 'orgs members': {
      const members = await identity.membersOf(await orgIdOf(argument('<name>')));
      table(print, ['USER_ID', 'EMAIL', 'ROLE', 'VERIFIED', 'ADDED'], members.map((m) => [m.user_id, m.email ?? '(admin)', m.role, String(m.email_verified), m.added_at]));
      return;
    }
    case 'orgs add-member': {
      const org_id = await orgIdOf(argument('<name>'));
      const email = requireEmail(rest[1]);
      const role = (values.role ?? 'member') as Role;
      if (!isRole(role)) throw invalid('--role must be owner, admin or member');
      const context = newCommandContext({ org_id, actor_key_id: null });
      const user_id = await identity.registerUser(email, context);
      await identity.addMember(org_id, user_id, role, stepContext(context, 'member'));
      print(`${email} joins ${rest[0]} as ${role}: they sign in with \`vers login --git\``);
      return;
    }
    case 'users list': {
      const users = await readModels.find<UserDocument>(USERS_COLLECTION, {}, { sort: { registered_at: 1, _id: 1 } });
      const keys = await readModels.find<SshKeyDocument>(SSH_KEYS_COLLECTION, {});
      table(
        print,
        ['USER_ID', 'EMAIL', 'VERIFIED', 'REGISTERED', 'SSH_KEYS'],
        users.map((user) => [user.user_id, user.email ?? '(admin)', String(user.email_verified), user.registered_at, keys.filter((key) => key.user_id === user.user_id).map((key) => key.fingerprint).join(',') || null]),
      );
      return;
    }
    case 'users unbind-key': {
      const fingerprint = argument('<SHA256:fingerprint>');
      const base64 = /^SHA256:([A-Za-z0-9+/]{43})=?$/.exec(fingerprint)?.[1];
      if (!base64) throw invalid(`'${fingerprint}' is not an SSH key fingerprint (SHA256:…, as ssh-keygen -lf key.pub prints it)`);
      const hex = Buffer.from(base64, 'base64').toString('hex');
      const { state } = await aggregates.load(SshKey, hex);
      if (!state.binding) throw notFound(`SSH key ${fingerprint}`);
      const user = (await aggregates.load(User, state.binding.user_id)).state;
      const org_id = (await identity.orgsOf(state.binding.user_id))[0]?.org_id ?? '';
      await aggregates.handle(SshKey, hex, { type: 'UnbindSshKey', now: new Date().toISOString() }, newCommandContext({ org_id, actor_key_id: null }));
      print(`SSH key ${fingerprint} is no longer bound to ${user.email}`);
      return;
    }
    default:
      if (values.help || !area) {
        print(OPERATOR_USAGE);
        return;
      }
      throw invalid(`unknown command '${positionals.join(' ')}'\n\n${OPERATOR_USAGE}`);
  }
}
