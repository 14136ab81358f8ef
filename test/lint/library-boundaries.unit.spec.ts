import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '../..');

/**
 * `npm run lint`'s own configuration, run on snippets placed at paths in the tree. ESLint loads its
 * ESM config by dynamic import, which jest's module sandbox cannot do: a plain node process does.
 */
function lintSnippets(snippets: { file: string; code: string }[]): string[][] {
  const script = `
    import { ESLint } from 'eslint';
    const eslint = new ESLint({ cwd: process.argv[1] });
    const snippets = JSON.parse(process.argv[2]);
    const results = [];
    for (const { file, code } of snippets) {
      const [result] = await eslint.lintText(code, { filePath: file });
      results.push(result.messages.filter((m) => m.ruleId === 'arbor/library-boundaries').map((m) => m.message));
    }
    console.log(JSON.stringify(results));`;
  const output = execFileSync('node', ['--input-type=module', '-e', script, root, JSON.stringify(snippets)], { cwd: root, encoding: 'utf8' });
  return JSON.parse(output) as string[][];
}

describe('lint: libraries are entered through their public entries only', () => {
  it("refuses another library's internals, misplaced entries and cycles, and lets the public entries through", () => {
    const [deepImport, unknownEntry, testingInApp, selfAlias, libToApp, publicIndex, testingInSpec, ownRelative, primitivesInBench] = lintSnippets([
      { file: 'apps/api/src/vms/example.ts', code: "import { vmDecider } from '../../../../libs/domain/src/vm/vm.decider';\nexport { vmDecider };\n" },
      { file: 'apps/api/src/vms/example.ts', code: "import { vmDecider } from '@arbor/domain/vm';\nexport { vmDecider };\n" },
      { file: 'apps/api/src/vms/example.ts', code: "import { deciderSpec } from '@arbor/domain/testing';\nexport { deciderSpec };\n" },
      { file: 'libs/domain/src/vm/example.ts', code: "import { notFound } from '@arbor/domain';\nexport { notFound };\n" },
      { file: 'libs/domain/src/vm/example.ts', code: "import { startEmbedded } from '../../../../apps/embedded/src/embedded';\nexport { startEmbedded };\n" },
      { file: 'apps/api/src/vms/example.ts', code: "import { vmDecider } from '@arbor/domain';\nexport { vmDecider };\n" },
      { file: 'apps/api/src/vms/example.unit.spec.ts', code: "import { deciderSpec } from '@arbor/domain/testing';\nexport { deciderSpec };\n" },
      { file: 'libs/domain/src/vm/example.ts', code: "import { notFound } from '../shared/domain-error';\nexport { notFound };\n" },
      { file: 'bench/example.ts', code: "import { QmpClient } from '@arbor/hypervisor/primitives';\nexport { QmpClient };\n" },
    ].map(({ file, code }) => ({ file: join(root, file), code })));

    expect(deepImport).toEqual(["'../../../../libs/domain/src/vm/vm.decider' reaches into libs/domain's internals: import '@arbor/domain' (its public index) instead"]);
    expect(unknownEntry).toEqual([`'@arbor/domain/vm' is not a public entry of a library (tsconfig.json "paths" lists them)`]);
    expect(testingInApp).toEqual(["'@arbor/domain/testing' is for tests (*.spec.ts, testing/ helpers, test/, trust/) only"]);
    expect(selfAlias).toEqual(["libs/domain imports its own files relatively, never through '@arbor/domain' (a cycle through its own index)"]);
    expect(libToApp).toEqual(["libs/domain imports an app ('../../../../apps/embedded/src/embedded'): libraries never depend on apps"]);
    expect([publicIndex, testingInSpec, ownRelative, primitivesInBench]).toEqual([[], [], [], []]);
  });

  it('checks require(), import = require() and the paths jest loads or mocks, not only import declarations', () => {
    const [required, importRequire, mocked, requireActual, templatePath, requirePublic, mockPublic] = lintSnippets([
      { file: 'apps/api/src/vms/example.ts', code: "const { vmDecider } = require('../../../../libs/domain/src/vm/vm.decider');\nexport { vmDecider };\n" },
      { file: 'apps/api/src/vms/example.ts', code: "import decider = require('../../../../libs/domain/src/vm/vm.decider');\nexport { decider };\n" },
      { file: 'apps/api/src/vms/example.unit.spec.ts', code: "jest.mock('../../../../libs/hypervisor/src/sandbox/sandbox-driver');\n" },
      { file: 'apps/api/src/vms/example.unit.spec.ts', code: "export const real = jest.requireActual('../../../../libs/domain/src/vm/vm.decider');\n" },
      { file: 'apps/api/src/vms/example.ts', code: 'export const decider = require(`../../../../libs/domain/src/vm/vm.decider`);\n' },
      { file: 'apps/api/src/vms/example.ts', code: "export const domain = require('@arbor/domain');\n" },
      { file: 'apps/api/src/vms/example.unit.spec.ts', code: "jest.mock('@arbor/hypervisor');\n" },
    ].map(({ file, code }) => ({ file: join(root, file), code })));

    const deep = (path: string, lib: string) => [`'${path}' reaches into libs/${lib}'s internals: import '@arbor/${lib}' (its public index) instead`];
    expect(required).toEqual(deep('../../../../libs/domain/src/vm/vm.decider', 'domain'));
    expect(importRequire).toEqual(deep('../../../../libs/domain/src/vm/vm.decider', 'domain'));
    expect(mocked).toEqual(deep('../../../../libs/hypervisor/src/sandbox/sandbox-driver', 'hypervisor'));
    expect(requireActual).toEqual(deep('../../../../libs/domain/src/vm/vm.decider', 'domain'));
    expect(templatePath).toEqual(deep('../../../../libs/domain/src/vm/vm.decider', 'domain'));
    expect([requirePublic, mockPublic]).toEqual([[], []]);
  });

  it("refuses an app reaching into another app's files (apps/embedded alone composes them)", () => {
    const [apiIntoProjector, requiredByEdge, mockedInWorkerSpec, embeddedComposes, ownApp, testIntoApp] = lintSnippets([
      { file: 'apps/api/src/time-travel/example.ts', code: "import { ALL_PROJECTIONS } from '../../../projector/src/main';\nexport { ALL_PROJECTIONS };\n" },
      { file: 'apps/edge/src/example.ts', code: "export const vms = require('../../api/src/vms/vm-read-model');\n" },
      { file: 'apps/vm-worker/src/example.unit.spec.ts', code: "jest.mock('../../api/src/create-api-app');\n" },
      { file: 'apps/embedded/src/example.ts', code: "import { createApiApp } from '../../api/src/create-api-app';\nexport { createApiApp };\n" },
      { file: 'apps/api/src/vms/example.ts', code: "import { createApiApp } from '../create-api-app';\nexport { createApiApp };\n" },
      { file: 'test/api/example.e2e.spec.ts', code: "import { createApiApp } from '../../apps/api/src/create-api-app';\nexport { createApiApp };\n" },
    ].map(({ file, code }) => ({ file: join(root, file), code })));

    expect(apiIntoProjector).toEqual(["apps/api reaches into apps/projector ('../../../projector/src/main'): apps share code through a library (@arbor/<lib>), never each other's files"]);
    expect(requiredByEdge).toEqual(["apps/edge reaches into apps/api ('../../api/src/vms/vm-read-model'): apps share code through a library (@arbor/<lib>), never each other's files"]);
    expect(mockedInWorkerSpec).toEqual(["apps/vm-worker reaches into apps/api ('../../api/src/create-api-app'): apps share code through a library (@arbor/<lib>), never each other's files"]);
    expect([embeddedComposes, ownApp, testIntoApp]).toEqual([[], [], []]);
  });
});
