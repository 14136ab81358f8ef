import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * ESLint rule `arbor/library-boundaries`: code outside a library reaches it only through one of
 * its public entries, the `@arbor/…` aliases of tsconfig.json's "paths" (one source of truth);
 * everything else under libs/<lib>/ is that library's own business.
 * - `@arbor/<lib>` is the library's public index; other entries serve only the code named below.
 * - A relative import from outside a library into its folder is refused, and so is a library
 *   importing itself through its alias (a cycle through its own index) or importing an app.
 * - An app never imports another app's files: what two apps share lives in a library. The one
 *   exception is apps/embedded, which runs every app in one process and so composes them.
 * Every way a path is loaded is checked: import/export declarations, `import()`, `require()`,
 * `import x = require()` and the paths jest loads or replaces (`jest.mock()`, `requireActual()`…).
 */
const root = resolve(dirname(new URL(import.meta.url).pathname), '../..');
const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
const entries = new Set(Object.keys(tsconfig.compilerOptions.paths).filter((alias) => alias.startsWith('@arbor/')));

const under = (folder, file) => !relative(join(root, folder), file).startsWith('..');
const isTestCode = (file) => /\.spec\.ts$/.test(file) || file.split(sep).includes('testing') || under('test', file) || under('trust', file);
const isBenchmark = (file) => under('bench', file);

/** Entries besides a library's index, and who may use them. */
const RESTRICTED = {
  testing: { allowed: isTestCode, who: 'tests (*.spec.ts, testing/ helpers, test/, trust/)' },
  primitives: { allowed: isBenchmark, who: 'benchmarks (bench/)' },
};

/** The folder under `top` (libs or apps) that holds `file`, or null. */
function folderOf(top, file) {
  const parts = relative(join(root, top), file).split(sep);
  return parts[0] === '..' || parts.length < 2 ? null : parts[0];
}
const libraryOf = (file) => folderOf('libs', file);
const appOf = (file) => folderOf('apps', file);
/** The composition root: it starts every app in one process (npm start). */
const COMPOSING_APP = 'embedded';
/** jest's calls whose first argument is a module path. */
const JEST_PATH_CALLS = new Set(['mock', 'doMock', 'unmock', 'dontMock', 'setMock', 'requireActual', 'requireMock', 'createMockFromModule']);

/** Why `source`, imported by `file`, crosses a boundary; null when it does not. */
export function boundaryViolation(source, file) {
  const own = libraryOf(file);
  const alias = /^@arbor\/([^/]+)(?:\/(.+))?$/.exec(source);
  if (alias) {
    const [, lib, entry] = alias;
    if (!entries.has(source)) return `'${source}' is not a public entry of a library (tsconfig.json "paths" lists them)`;
    if (lib === own) return `libs/${lib} imports its own files relatively, never through '${source}' (a cycle through its own index)`;
    const rule = entry && RESTRICTED[entry];
    if (rule && !rule.allowed(file)) return `'${source}' is for ${rule.who} only`;
    return null;
  }
  if (!source.startsWith('.')) return null;
  const target = resolve(dirname(file), source);
  const lib = libraryOf(target);
  if (lib && lib !== own) return `'${source}' reaches into libs/${lib}'s internals: import '@arbor/${lib}' (its public index) instead`;
  if (own && under('apps', target)) return `libs/${own} imports an app ('${source}'): libraries never depend on apps`;
  const app = appOf(file);
  const targetApp = appOf(target);
  if (app && targetApp && targetApp !== app && app !== COMPOSING_APP) {
    return `apps/${app} reaches into apps/${targetApp} ('${source}'): apps share code through a library (@arbor/<lib>), never each other's files`;
  }
  return null;
}

/** The string literal a module path is given as (a template without expressions counts), or null. */
function pathLiteral(node) {
  if (!node) return null;
  if (node.type === 'Literal' && typeof node.value === 'string') return node;
  if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return { ...node, value: node.quasis[0].value.cooked };
  return null;
}

/** The module path argument of `require(…)` or `jest.mock(…)` and its kin, or null. */
function pathOfCall(call) {
  const { callee } = call;
  const isRequire = callee.type === 'Identifier' && callee.name === 'require';
  const isJest =
    callee.type === 'MemberExpression' &&
    callee.object.type === 'Identifier' &&
    callee.object.name === 'jest' &&
    callee.property.type === 'Identifier' &&
    JEST_PATH_CALLS.has(callee.property.name);
  return isRequire || isJest ? pathLiteral(call.arguments[0]) : null;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: "Refuses imports of another library's internals: only its @arbor/<lib> entries are public" },
    schema: [],
  },
  create(context) {
    const checkPath = (literal) => {
      if (!literal || typeof literal.value !== 'string') return;
      const why = boundaryViolation(literal.value, context.filename);
      if (why) context.report({ node: literal, message: why });
    };
    const check = (node) => checkPath(node.source);
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: (node) => checkPath(pathLiteral(node.source)),
      CallExpression: (node) => checkPath(pathOfCall(node)),
      TSExternalModuleReference: (node) => checkPath(pathLiteral(node.expression)),
    };
  },
};
