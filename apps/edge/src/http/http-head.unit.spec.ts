import { httpRefusal, parseHttpHead, splitHostPort } from './http-head';

const head = (text: string) => parseHttpHead(Buffer.from(text, 'latin1'));

describe('reading the head of an HTTP request to route it', () => {
  it('takes the Host (lowercase, port kept), or the host of an absolute-form target', () => {
    expect(head('GET /x HTTP/1.1\r\nHost: App.Example.com:8080\r\nAccept: */*\r\n\r\n')).toEqual({ kind: 'head', method: 'GET', host: 'app.example.com:8080' });
    expect(head('GET http://user@other.example.com:81/x HTTP/1.1\r\nhost: app.example.com\r\n\r\n')).toEqual({ kind: 'head', method: 'GET', host: 'other.example.com:81' });
    expect(head('GET / HTTP/1.0\r\n\r\n')).toEqual({ kind: 'head', method: 'GET', host: null });
    expect(head('POST / HTTP/1.1\nHost: a.example.com\n\n')).toMatchObject({ kind: 'head', host: 'a.example.com' });
    expect(head('GET / HTTP/1.1\r\nX-Host: b\r\nhostname: c\r\nHOST \t:\tA.example.com \r\n\r\n')).toMatchObject({ host: 'a.example.com' });
    expect(head('GET / HTTP/1.1\nAccept: */*\nhost: a.example.com\r\n\n')).toMatchObject({ host: 'a.example.com' });
    expect(head('GET / HTTP/1.1\r\nhostname: a.example.com\r\n\r\n')).toMatchObject({ kind: 'head', host: null });
    expect(head('GET / HTTP/1.1\r\nHost: \r\n\r\n')).toMatchObject({ kind: 'head', host: null });
  });

  it('waits for the rest of a head, and says "not HTTP" as soon as it can (SSH at its third byte)', () => {
    expect(head('GE')).toEqual({ kind: 'incomplete' });
    expect(head('GET / HTTP/1.1\r\nHost: a')).toEqual({ kind: 'incomplete' });
    expect(head('SSH')).toEqual({ kind: 'incomplete' });
    expect(head('SSH-')).toEqual({ kind: 'not_http' });
    expect(head('\x16\x03\x01')).toEqual({ kind: 'not_http' });
    expect(head('HELLO there\r\n')).toEqual({ kind: 'not_http' });
    expect(head('ABCDEFGHIJKLMNOPQ / HTTP/1.1\r\n')).toEqual({ kind: 'not_http' });
  });

  it('refuses two Host headers and heads past 16 KiB', () => {
    expect(head('GET / HTTP/1.1\r\nHost: a.example.com\r\nHost: b.example.com\r\n\r\n')).toEqual({ kind: 'bad_request', reason: 'more than one Host header' });
    expect(head(`GET / HTTP/1.1\r\nX: ${'a'.repeat(17_000)}`)).toMatchObject({ kind: 'bad_request' });
  });

  it('splits host and port', () => {
    expect(splitHostPort('a.example.com:8080')).toEqual({ host: 'a.example.com', port: 8080 });
    expect(splitHostPort('a.example.com.')).toEqual({ host: 'a.example.com', port: null });
    expect(splitHostPort('[::1]:22')).toEqual({ host: '[::1]', port: 22 });
    expect(splitHostPort('a.example.com:0').port).toBeNaN();
    expect(splitHostPort('a.example.com:99999').port).toBeNaN();
    expect(splitHostPort('a.example.com:http').port).toBeNaN();
  });

  it("answers a refusal as plain text that says why, and closes", () => {
    expect(httpRefusal(503, 'vm x is paused').toString()).toBe(
      'HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 15\r\nconnection: close\r\nserver: arbor-edge\r\n\r\nvm x is paused\n',
    );
  });
});
