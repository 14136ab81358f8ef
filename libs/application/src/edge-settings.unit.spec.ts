import { loadEdgeSettings } from './edge-settings';

describe('the edge settings', () => {
  const ROOT = 0;
  const USER = 1000;
  const ports = (env: NodeJS.ProcessEnv, uid: number | null) => {
    const { tlsPort, httpPort } = loadEdgeSettings(env, uid);
    return { tlsPort, httpPort };
  };

  it('takes 443 and 80 in production as root, where the Vers CLI dials the VMs', () => {
    expect(ports({ NODE_ENV: 'production' }, ROOT)).toEqual({ tlsPort: 443, httpPort: 80 });
  });

  it('takes 8443 and 8080 for the quick start: outside production, or as a user who may not bind 443', () => {
    expect(ports({}, ROOT)).toEqual({ tlsPort: 8443, httpPort: 8080 });
    expect(ports({ NODE_ENV: 'development' }, ROOT)).toEqual({ tlsPort: 8443, httpPort: 8080 });
    expect(ports({ NODE_ENV: 'production' }, USER)).toEqual({ tlsPort: 8443, httpPort: 8080 });
    expect(ports({ NODE_ENV: 'production' }, null)).toEqual({ tlsPort: 8443, httpPort: 8080 });
  });

  it('lets EDGE_PORT and EDGE_HTTP_PORT decide when set, production or not', () => {
    expect(ports({ NODE_ENV: 'production', EDGE_PORT: '9443', EDGE_HTTP_PORT: 'off' }, ROOT)).toEqual({ tlsPort: 9443, httpPort: null });
    expect(ports({ EDGE_PORT: '443', EDGE_HTTP_PORT: '80' }, USER)).toEqual({ tlsPort: 443, httpPort: 80 });
    expect(ports({ EDGE_PORT: '0' }, USER)).toEqual({ tlsPort: 0, httpPort: 8080 });
    expect(() => loadEdgeSettings({ EDGE_PORT: '70000' }, ROOT)).toThrow('EDGE_PORT must be a TCP port, 0 for any free one (got "70000")');
  });
});
