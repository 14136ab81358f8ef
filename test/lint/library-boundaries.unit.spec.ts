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
});
