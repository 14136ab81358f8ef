import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * ESLint rule `arbor/library-boundaries`: code outside a library reaches it only through one of
 * its public entries, the `@arbor/…` aliases of tsconfig.json's "paths" (one source of truth);
 * everything else under libs/<lib>/ is that library's own business.
 * - `@arbor/<lib>` is the library's public index; other entries serve only the code named below.
 * - A relative import from outside a library into its folder is refused, and so is a library
 *   importing itself through its alias (a cycle through its own index) or importing an app.
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

function libraryOf(file) {
  const parts = relative(join(root, 'libs'), file).split(sep);
  return parts[0] === '..' || parts.length < 2 ? null : parts[0];
}

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
  return null;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: "Refuses imports of another library's internals: only its @arbor/<lib> entries are public" },
    schema: [],
  },
  create(context) {
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string') return;
      const why = boundaryViolation(node.source.value, context.filename);
      if (why) context.report({ node: node.source, message: why });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
