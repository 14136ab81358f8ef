import { versUrlOf } from './vers-url';

describe('the VERS_URL of an installation', () => {
  it('is api.<domain> when the website origin is the edge domain on its default port: sign-in at <domain>, VMs at vm.<domain>', () => {
    expect(versUrlOf('https://example.com', 'example.com')).toBe('https://api.example.com');
    expect(versUrlOf('http://127.0.0.1.sslip.io', '127.0.0.1.sslip.io')).toBe('http://api.127.0.0.1.sslip.io');
  });

  it('is the public URL itself otherwise (the CLI would drop a port on the way to sign-in)', () => {
    expect(versUrlOf('http://localhost:3000', 'localhost')).toBe('http://localhost:3000');
    expect(versUrlOf('https://arbor.example.com', 'example.com')).toBe('https://arbor.example.com');
  });
});
