/** Jest runs TypeScript through swc: ts-jest cannot load NestJS 12's ESM packages on Node 20. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/test', '<rootDir>/trust'],
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      {
        jsc: {
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
          target: 'es2022',
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  // The libraries' public entries (tsconfig.json "paths"): `@arbor/<lib>` and `@arbor/<lib>/<entry>`.
  moduleNameMapper: {
    '^@arbor/([^/]+)$': '<rootDir>/libs/$1/src',
    '^@arbor/([^/]+)/([^/]+)$': '<rootDir>/libs/$1/src/$2',
  },
  // NestJS 12 and content-disposition (of @fastify/static, the API docs' pages) are ESM: compiled like the sources.
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/|content-disposition/)(?!.*/node_modules/content-disposition/)'],
  testTimeout: 60000,
};
