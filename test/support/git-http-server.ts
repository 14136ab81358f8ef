import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The files of one commit: path → content (a string, or bytes with a mode). */
export type TreeFiles = Record<string, string | { content: string | Buffer; mode?: number }>;

/**
 * A git host as a test runs one: bare repositories under a temporary directory served over smart
 * HTTP by git's own `git http-backend` (a CGI program) behind a small Node server on a free local
 * port. Repositories are `<url>/<owner>/<repo>.git`, as on GitHub. With `credentials`, every
 * request must carry them (Basic), else 401 as a private host answers.
 */
export class GitHttpServer {
  /** Every request, as `METHOD path?query` with the Authorization header it carried. */
  readonly requests: { line: string; authorization: string | null }[] = [];

  private constructor(
    private readonly server: Server,
    readonly root: string,
    readonly url: string,
    private readonly credentials: { username: string; token: string } | null,
  ) {}

  static async start(options: { credentials?: { username: string; token: string } } = {}): Promise<GitHttpServer> {
    const root = mkdtempSync(join(tmpdir(), 'arbor-git-'));
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const host = new GitHttpServer(server, root, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, options.credentials ?? null);
    server.on('request', (request, response) => host.handle(request, response));
    return host;
  }

  /**
   * Makes (or adds to) the bare repository `owner/repo` with one commit on `branch` holding
   * `files`; the first branch made is the default one. Returns the commit's sha.
   */
  commit(repo: string, files: TreeFiles, branch = 'main'): string {
    const bare = join(this.root, `${repo}.git`);
    const work = mkdtempSync(join(tmpdir(), 'arbor-git-work-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: work, env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'test', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'test', GIT_COMMITTER_EMAIL: 't@example.com' } }).toString().trim();
    try {
      mkdirSync(bare, { recursive: true });
      if (!execFileSync('ls', [bare]).toString().trim()) execFileSync('git', ['init', '-q', '--bare', '--initial-branch', branch, bare]);
      git('init', '-q', '--initial-branch', branch);
      for (const [path, file] of Object.entries(files)) {
        mkdirSync(dirname(join(work, path)), { recursive: true });
        const { content, mode } = typeof file === 'string' ? { content: file, mode: 0o644 } : file;
        writeFileSync(join(work, path), content, { mode: mode ?? 0o644 });
      }
      git('add', '-A');
      git('commit', '-q', '-m', `commit on ${branch}`);
      git('push', '-q', '--force', bare, `HEAD:refs/heads/${branch}`);
      return git('rev-parse', 'HEAD');
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    rmSync(this.root, { recursive: true, force: true });
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const authorization = request.headers.authorization ?? null;
    this.requests.push({ line: `${request.method} ${request.url}`, authorization });
    if (this.credentials) {
      const expected = `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.token}`).toString('base64')}`;
      if (authorization !== expected) {
        response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end('authentication required\n');
        return;
      }
    }
    const url = new URL(request.url ?? '/', 'http://git');
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: this.root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      REQUEST_METHOD: request.method ?? 'GET',
      CONTENT_TYPE: request.headers['content-type'] ?? '',
      REMOTE_ADDR: request.socket.remoteAddress ?? '',
    };
    if (request.headers['content-length']) env.CONTENT_LENGTH = request.headers['content-length'];
    if (request.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = request.headers['content-encoding'];
    if (request.headers['git-protocol']) env.GIT_PROTOCOL = String(request.headers['git-protocol']);
    const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    request.pipe(cgi.stdin);
    // A CGI answer: header lines (Status: among them), a blank line, then the body.
    let head = Buffer.alloc(0);
    let answered = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (answered) {
        response.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n') >= 0 ? { at: head.indexOf('\r\n\r\n'), length: 4 } : head.indexOf('\n\n') >= 0 ? { at: head.indexOf('\n\n'), length: 2 } : null;
      if (!end) return;
      answered = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end.at).toString('latin1').split(/\r?\n/)) {
        const colon = line.indexOf(':');
        const [name, value] = [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else headers[name] = value;
      }
      response.writeHead(status, headers);
      response.write(head.subarray(end.at + end.length));
    });
    cgi.on('close', () => {
      if (!answered) response.writeHead(502).end('git http-backend gave no answer\n');
      else response.end();
    });
  }
}
