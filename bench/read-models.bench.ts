import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VM_CONFIG_DEFAULTS } from '@arbor/domain';
import {
  REPOSITORIES_COLLECTION,
  repositoryKey,
  SqliteReadModelStore,
  VMS_COLLECTION,
  type RepositoryDocument,
  type VmDocument,
  type WriteOp,
} from '@arbor/read-models';
import { ALL_PROJECTIONS } from '@arbor/projections';
import { report, spreadOf, timed } from './stats';

const ORGS = 100;
const PER_ORG = 100;
/** Documents a commit while seeding (the projector commits one event's ops at a time; this is the bulk cost). */
const BATCH = 100;
const ROUNDS = 200;

/**
 * The embedded read-model store holding 10,000 VMs and 10,000 repositories of 100 orgs, with the
 * projections' indexes, queried straight (no HTTP): an org's VM list (what GET /vms asks) and a
 * public repository by org name and name (GET /repositories/public/{org}/{repo}).
 */
export async function benchReadModels(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'arbor-bench-read-models-'));
  const store = SqliteReadModelStore.open(join(dir, 'read-models.db'));
  try {
    for (const projection of ALL_PROJECTIONS) {
      for (const index of projection.indexes ?? []) await store.ensureIndex(index.collection, index.keys);
    }
    const docs: WriteOp[] = [];
    for (let i = 0; i < ORGS * PER_ORG; i++) {
      docs.push({ op: 'insertOne', collection: VMS_COLLECTION, doc: vmDocument(i) });
      docs.push({ op: 'insertOne', collection: REPOSITORIES_COLLECTION, doc: repositoryDocument(i) });
    }
    const [, seedMs] = await timed(async () => {
      for (let i = 0; i < docs.length; i += BATCH) await store.commit(docs.slice(i, i + BATCH));
    });

    const list: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const org_id = orgId((i * 37) % ORGS);
      list.push((await timed(() => store.find(VMS_COLLECTION, { org_id, deleted_at: null }, { sort: { created_at: 1, _id: 1 } })))[1]);
    }
    const get: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const n = ((i * 7919) % (ORGS * PER_ORG)) & ~1; // even: public
      const filter = { is_public: true, org_name: orgName(n % ORGS), name: repositoryName(n) };
      get.push((await timed(() => store.findOne(REPOSITORIES_COLLECTION, filter)))[1]);
    }

    console.log(`Read models at ${ORGS * PER_ORG} VMs and ${ORGS * PER_ORG} repositories of ${ORGS} orgs (SQLite store, no HTTP)`);
    report([
      [`seed (${docs.length} inserts, ${BATCH} a commit)`, `${(seedMs / 1000).toFixed(2)} s`],
      [`list one org's VMs (${PER_ORG}, 10% deleted)`, spreadOf(list)],
      ['get a public repository by org name and name', spreadOf(get)],
    ]);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const orgId = (org: number) => `00000000-0000-4000-8000-${String(org).padStart(12, '0')}`;
const orgName = (org: number) => `org-${org}`;
const repositoryName = (n: number) => `repo-${n}`;

function vmDocument(n: number): VmDocument {
  const vm_id = `11111111-1111-4111-8111-${String(n).padStart(12, '0')}`;
  return {
    _id: vm_id,
    vm_id,
    org_id: orgId(n % ORGS),
    owner_id: orgId(n % ORGS),
    created_at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
    state: 'running',
    labels: { i: String(n) },
    ip: `fd00::${n.toString(16)}`,
    config: VM_CONFIG_DEFAULTS,
    parent_commit_id: null,
    grandparent_vm_id: null,
    deleting: false,
    deleted_at: n % 10 === 0 ? new Date(Date.UTC(2026, 1, 1)).toISOString() : null,
    failure_reason: null,
  };
}

function repositoryDocument(n: number): RepositoryDocument {
  const org = n % ORGS;
  return {
    _id: repositoryKey(orgId(org), repositoryName(n)),
    repo_id: `22222222-2222-4222-8222-${String(n).padStart(12, '0')}`,
    org_id: orgId(org),
    org_name: orgName(org),
    name: repositoryName(n),
    description: null,
    is_public: n % 2 === 0,
    created_at: new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString(),
  };
}
