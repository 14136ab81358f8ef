import { deciderSpec } from '../testing/decider-spec';
import { customDomainDecider } from './custom-domain.decider';
import type { CustomDomainEvent } from './custom-domain.events';
import { requireHostName } from './host-name';

const now = '2026-11-24T10:00:00.000Z';
const domain_id = '11111111-1111-4111-8111-111111111111';
const vm_id = '22222222-2222-4222-8222-222222222222';
const spec = deciderSpec(customDomainDecider);
const add = (fields: { domain?: string; domain_id?: string; org_id?: string } = {}) => ({
  type: 'AddDomain' as const,
  domain_id: fields.domain_id ?? domain_id,
  domain: fields.domain ?? 'app.example.com',
  vm_id,
  org_id: fields.org_id ?? 'org-1',
  now,
});
const added: CustomDomainEvent = { type: 'DomainAdded', data: { domain_id, domain: 'app.example.com', vm_id, org_id: 'org-1', created_at: now } };
const removed = (reason: 'deleted' | 'vm_deleted'): CustomDomainEvent => ({
  type: 'DomainRemoved',
  data: { domain_id, domain: 'app.example.com', vm_id, org_id: 'org-1', reason, removed_at: now },
});

describe('custom domain decider: a host name held by one VM across the installation', () => {
  it('adds a free name, lowercase and without its trailing dot', () => {
    spec.given([]).when(add({ domain: 'App.Example.COM.' })).then([added]);
  });

  it('refuses a name held by anyone (409), but a retry of the add that holds it appends nothing', () => {
    spec.given([added]).when(add({ domain_id: '33333333-3333-4333-8333-333333333333', org_id: 'org-2' })).thenThrows('conflict', "domain 'app.example.com' is already in use");
    spec.given([added]).when(add({ domain_id: '33333333-3333-4333-8333-333333333333' })).thenThrows('conflict');
    spec.given([added]).when(add()).then([]);
  });

  it('frees the name when removed, for anyone to add again', () => {
    spec.given([added]).when({ type: 'RemoveDomain', domain_id, org_id: 'org-1', now }).then([removed('deleted')]);
    spec.given([added, removed('deleted')]).when(add({ domain_id: '33333333-3333-4333-8333-333333333333', org_id: 'org-2' })).then([
      { type: 'DomainAdded', data: { domain_id: '33333333-3333-4333-8333-333333333333', domain: 'app.example.com', vm_id, org_id: 'org-2', created_at: now } },
    ]);
  });

  it("removes only the org's own domain under its id; anything else is not found", () => {
    spec.given([added]).when({ type: 'RemoveDomain', domain_id, org_id: 'org-2', now }).thenThrows('not_found', 'domain not found');
    spec.given([added]).when({ type: 'RemoveDomain', domain_id: '33333333-3333-4333-8333-333333333333', org_id: 'org-1', now }).thenThrows('not_found');
    spec.given([added, removed('deleted')]).when({ type: 'RemoveDomain', domain_id, org_id: 'org-1', now }).thenThrows('not_found');
    spec.given([]).when({ type: 'RemoveDomain', domain_id, org_id: 'org-1', now }).thenThrows('not_found');
  });

  it("releases the name of a deleted VM, once, and leaves another VM's holding alone", () => {
    spec.given([added]).when({ type: 'ReleaseDomain', vm_id, now }).then([removed('vm_deleted')]);
    spec.given([added, removed('vm_deleted')]).when({ type: 'ReleaseDomain', vm_id, now }).then([]);
    spec.given([added]).when({ type: 'ReleaseDomain', vm_id: '44444444-4444-4444-8444-444444444444', now }).then([]);
    spec.given([]).when({ type: 'ReleaseDomain', vm_id, now }).then([]);
  });

  it('refuses a name that is not a host name by RFC 1123 (400), saying why', () => {
    const cases: [string, RegExp][] = [
      ['', /must not be empty/],
      ['localhost', /fully qualified/],
      ['-app.example.com', /not a valid host name.*'-app'/],
      ['app-.example.com', /not a valid host name/],
      ['app..example.com', /not a valid host name/],
      ['app_1.example.com', /not a valid host name/],
      ['*.example.com', /not a valid host name/],
      ['app.example.com:8080', /not a valid host name/],
      ['https://app.example.com', /not a valid host name/],
      ['ünïcode.example.com', /xn-- form/],
      ['app example.com', /ASCII letters/],
      ['10.0.0.1', /an address, not a host name/],
      [`${'a'.repeat(64)}.example.com`, /not a valid host name/],
      [`${'a'.repeat(60)}.`.repeat(5) + 'com', /longer than 253/],
    ];
    for (const [domain, message] of cases) spec.given([]).when(add({ domain })).thenThrows('invalid', message);
  });

  it('takes digits-first labels, inner hyphens, punycode and 63-character labels', () => {
    for (const name of ['3com.example.com', 'my-app.example.co.uk', 'xn--bcher-kva.example', `${'a'.repeat(63)}.example.com`, 'a.b']) {
      expect(requireHostName(name)).toBe(name);
    }
  });
});
