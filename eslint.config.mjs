import tseslint from 'typescript-eslint';
import libraryBoundaries from './tools/lint/library-boundaries.mjs';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', 'coverage/**', '*.js', '*.mjs'] },
  ...tseslint.configs.recommended,
  {
    plugins: { arbor: { rules: { 'library-boundaries': libraryBoundaries } } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
      'arbor/library-boundaries': 'error',
    },
  },
);
