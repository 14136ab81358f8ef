import { KIT_PATHS } from '../kit/kit-paths';
import type { GuestAgentClient } from './guest-agent-client';
import { applyGuestIdentity } from './guest-identity';

/** A guest agent that records each guest-exec and answers it with the next of `exits`. */
function agentAnswering(exits: { exitcode: number; stderr: string }[]) {
  const runs: { path: string; arg: string[]; input: Buffer }[] = [];
  const agent = {
    async request(command: string, args: { path: string; arg: string[]; 'input-data'?: string; pid?: number }) {
      if (command === 'guest-exec') {
        runs.push({ path: args.path, arg: args.arg, input: Buffer.from(args['input-data'] ?? '', 'base64') });
        return { pid: runs.length };
      }
      const { exitcode, stderr } = exits[args.pid! - 1];
      return { exited: true, exitcode, 'err-data': Buffer.from(stderr).toString('base64') };
    },
  };
  return { agent: agent as unknown as GuestAgentClient, runs };
}

const identity = { hostname: 'child-1', ssh_authorized_key: 'ssh-ed25519 AAAA user@example' };

describe('a guest identity', () => {
  it('is made by the kit helper in one process, its fields length-prefixed on stdin', async () => {
    const { agent, runs } = agentAnswering([{ exitcode: 0, stderr: '' }]);
    await applyGuestIdentity(agent, identity, { B: '2', A: 'one' }, 'link set dev eth0 up\n');
    expect(runs).toHaveLength(1);
    expect(runs[0].path).toBe(KIT_PATHS.helper);
    expect(runs[0].arg.slice(0, 2)).toEqual(['identity', 'child-1']);
    // seed, private key, public key, authorized key, environment, network: each "<length>\n<bytes>".
    const fields: string[] = [];
    for (let at = 0, input = runs[0].input; at < input.length; ) {
      const newline = input.indexOf('\n', at);
      const length = Number(input.subarray(at, newline).toString());
      fields.push(input.subarray(newline + 1, newline + 1 + length).toString());
      at = newline + 1 + length;
    }
    expect(fields).toHaveLength(6);
    expect(fields[1]).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----/);
    expect(fields[2]).toMatch(/^ssh-ed25519 \S+ root@child-1$/);
    expect(fields.slice(3)).toEqual([identity.ssh_authorized_key, 'A=one\nB=2\n', 'link set dev eth0 up\n']);
  });

  it("falls back to the kit shell's script on a machine whose kit has no identity command", async () => {
    const { agent, runs } = agentAnswering([
      { exitcode: 2, stderr: 'arbor-guest: unknown command\n' },
      { exitcode: 0, stderr: '' },
    ]);
    await applyGuestIdentity(agent, identity, {}, null);
    expect(runs.map((run) => run.path)).toEqual([KIT_PATHS.helper, KIT_PATHS.busybox]);
    expect(runs[1].arg.slice(0, 2)).toEqual(['sh', '-c']);
  });

  it('fails with what the helper said when it fails otherwise, without running the old script', async () => {
    const { agent, runs } = agentAnswering([{ exitcode: 1, stderr: 'arbor-guest: sshd did not start with the machine\'s host key and environment: no key\n' }]);
    await expect(applyGuestIdentity(agent, identity, {}, null)).rejects.toThrow(/exited 1: arbor-guest: sshd did not start .*no key/);
    expect(runs).toHaveLength(1);
  });
});
