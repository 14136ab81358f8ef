import { parseImageReference } from './image-reference';
import { parseChallenge } from './www-authenticate';

describe('image references, as Docker reads them', () => {
  it.each([
    ['busybox', { registry: 'docker.io', apiHost: 'registry-1.docker.io', repository: 'library/busybox', tag: 'latest', digest: null }],
    ['debian:bookworm', { registry: 'docker.io', repository: 'library/debian', tag: 'bookworm' }],
    ['team/app:1.2', { registry: 'docker.io', repository: 'team/app', tag: '1.2' }],
    ['localhost:5000/test/img:v1', { registry: 'localhost:5000', apiHost: 'localhost:5000', repository: 'test/img', tag: 'v1' }],
    ['127.0.0.1:5000/img', { registry: '127.0.0.1:5000', repository: 'img', tag: 'latest' }],
    [`ghcr.io/o/r@sha256:${'a'.repeat(64)}`, { registry: 'ghcr.io', repository: 'o/r', tag: null, digest: `sha256:${'a'.repeat(64)}` }],
    [`quay.io/o/r:t@sha256:${'b'.repeat(64)}`, { repository: 'o/r', tag: 't', digest: `sha256:${'b'.repeat(64)}` }],
  ])('%s', (reference, expected) => expect(parseImageReference(reference)).toMatchObject(expected));

  it.each(['', 'UPPER/case', 'a::b', 'img@sha256:short', 'bad host!/x', 'x:' + 't'.repeat(200)])('refuses %j, saying why', (reference) => {
    expect(() => parseImageReference(reference)).toThrow(/image_ref/);
  });
});

describe('WWW-Authenticate challenges', () => {
  it('reads a bearer challenge with quoted, comma-holding values', () => {
    expect(parseChallenge('Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://auth.example/token', service: 'registry.example', scope: 'repository:a/b:pull,push' },
    });
    expect(parseChallenge('Basic realm="x"')).toEqual({ scheme: 'basic', params: { realm: 'x' } });
  });
});
