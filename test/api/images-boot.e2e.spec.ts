import { startTestArbor, type TestArbor } from '../support/arbor-harness';
import { pushTestImage } from '../support/oci-image';
import { pollUntil } from '../support/poll-until';
import { describeUnless, rootReason } from '../support/skip-unless';
import { startTestRegistry, type TestRegistry } from '../support/test-registry';

/**
 * The whole path on a real driver: an image pushed into Debian's docker-registry with skopeo (two
 * layers: a busybox-static root, then a whiteout, an opaque directory and a new file), built by
 * POST /images/create, booted by new_root {image_name}; exec in the VM sees the upper layer's
 * files and not those it deleted, runs busybox's sh (no bash, perl or glibc in the image), keeps
 * exit codes and env. Then the image cannot be deleted while the VM runs.
 */
for (const name of ['sandbox', 'qemu'] as const) {
  describeUnless(rootReason)(`a registry image booted on the ${name} driver (HTTP)`, () => {
    let arbor: TestArbor;
    let registry: TestRegistry;
    let vm: string;

    beforeAll(async () => {
      registry = await startTestRegistry();
      await pushTestImage(registry.host, 'arbor/boot', 'v1');
      arbor = await startTestArbor({ env: { HYPERVISOR: name, ARBOR_REGISTRY_INSECURE: registry.host } });
      const created = await arbor.request('POST', '/api/v1/images/create', { body: { image_name: 'busybox-layers', source: { type: 'docker', image_ref: `${registry.host}/arbor/boot:v1` }, size_mib: 64 } });
      expect(created.status).toBe(201);
      let status: { status: string; error_message?: string } = { status: 'pending' };
      await pollUntil(
        async () => {
          status = (await arbor.request('GET', '/api/v1/images/busybox-layers/status')).json;
          return status.status === 'completed' || status.status === 'failed';
        },
        { timeoutMs: 600_000, intervalMs: 500 },
      );
      expect(status).toMatchObject({ status: 'completed' });
      const booted = await arbor.request('POST', '/api/v1/vm/new_root?wait_boot=true', { body: { vm_config: { image_name: 'busybox-layers', mem_size_mib: 256 } } });
      expect(booted.status).toBe(201);
      vm = booted.json.vm_id;
    }, 900_000);
    afterAll(async () => {
      await arbor?.destroy();
      await registry?.stop();
    }, 120_000);

    const exec = async (command: string[], env?: Record<string, string>) => {
      const res = await arbor.request('POST', `/api/v1/vm/${vm}/exec`, { body: { command, ...(env ? { env } : {}) } });
      expect(res.status).toBe(200);
      return res.json as { exit_code: number; stdout: string; stderr: string };
    };

    it("exec sees the image's files, not the ones its upper layer deleted", async () => {
      expect((await exec(['cat', '/hello.txt'])).stdout).toBe('hello from the registry image\n');
      expect((await exec(['ls', '/opt/data'])).stdout).toBe('new\n');
      expect((await exec(['test', '-e', '/etc/removed'])).exit_code).toBe(1);
      expect((await exec(['test', '-e', '/wrong-platform'])).exit_code).toBe(1);
    });

    it('runs commands in an image without bash, perl or glibc: ordered output, exit codes, env', async () => {
      const result = await exec(['sh', '-c', 'echo one; echo two >&2; echo "$GREETING"; exit 3'], { GREETING: 'hi' });
      expect(result).toMatchObject({ exit_code: 3, stdout: 'one\nhi\n', stderr: 'two\n' });
      expect((await exec(['test', '-e', '/usr/bin/perl'])).exit_code).toBe(1);
    });

    it('refuses to delete the image while the VM uses it', async () => {
      const { base_image_id } = (await arbor.request('GET', '/api/v1/images/busybox-layers/status')).json;
      expect((await arbor.request('DELETE', `/api/v1/images/images/${base_image_id}`)).status).toBe(409);
      expect((await arbor.request('DELETE', `/api/v1/vm/${vm}`)).status).toBe(200);
      expect((await arbor.request('DELETE', `/api/v1/images/images/${base_image_id}`)).status).toBe(200);
    });
  });
}
