import { serializedEvent, type RecordedEvent } from '@arbor/event-store';
import { presentedEventJson, presentEvent, REDACTED } from './event-presentation';

describe('presentedEventJson: the presented event as JSON from data still in JSON text', () => {
  const metadata = { schema_version: 1, correlation_id: 'c', causation_id: 'c', actor_key_id: 'k', org_id: 'o', extra: 'not shown' };
  const recorded = (type: string, data: unknown, meta: Record<string, unknown> = metadata): RecordedEvent => ({
    id: `id-${type}`,
    type,
    data,
    metadata: meta as RecordedEvent['metadata'],
    stream_id: 'vm-1',
    revision: 3,
    position: 42,
    created_at: '2026-11-24T01:02:03.000Z',
  });

  it.each([
    ['an ordinary event, its data copied as it is', recorded('VmLabelsSet', { vm_id: 'v', labels: { a: 'é"\\\n', b: '' } })],
    ['data null', recorded('VmBooted', null)],
    ['metadata without optional ids', recorded('VmBooted', { vm_id: 'v' }, { schema_version: 1, correlation_id: 'c', org_id: null })],
    ['a type with redacted fields', recorded('ApiKeyIssued', { key_id: 'k', org_id: 'o', label: 'l', secret_sha256: 'abc', is_operator: false, issued_at: 't' })],
  ])('is byte for byte JSON.stringify(presentEvent(event)) for %s', (_name, event) => {
    expect(presentedEventJson(serializedEvent(event))).toBe(JSON.stringify(presentEvent(event)));
  });

  it('never copies a redacted field', () => {
    const event = recorded('ApiKeyIssued', { key_id: 'k', secret_sha256: 'secret-hash' });
    const line = presentedEventJson(serializedEvent(event));
    expect(line).not.toContain('secret-hash');
    expect(JSON.parse(line).data.secret_sha256).toBe(REDACTED);
  });

  it('never copies a sealed field, sealed or written in clear before sealing', () => {
    for (const schema_version of [1, 2]) {
      const event = recorded('EnvVarsSet', { owner_id: 'k', vars: { DB_PASSWORD: 'in-clear-or-sealed' }, replace: false, set_at: 't' }, { ...metadata, schema_version });
      const line = presentedEventJson(serializedEvent(event));
      expect(line).not.toContain('in-clear-or-sealed');
      expect(JSON.parse(line).data.vars).toEqual({ DB_PASSWORD: REDACTED });
    }
  });
});
