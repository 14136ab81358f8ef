import type { GitHttpServer } from './git-http-server';

/**
 * The app the deploy tests' repository holds: a perl HTTP server (perl-base is in the VM's image)
 * that answers what the build made; `GET /quit` makes it exit with code 3 (a crash, on demand).
 */
export const DEPLOYED_SERVER = String.raw`
use strict; use IO::Socket::IP; $| = 1;
my $port = shift;
my $server = IO::Socket::IP->new(LocalHost => '::', LocalPort => $port, Listen => 16, ReuseAddr => 1, V6Only => 0) or die "listen: $@\n";
open(my $f, '<', 'built.txt') or die "built.txt: $!\n"; my $body = <$f>; close $f;
print "listening on $port\n";
while (my $client = $server->accept) {
  my $head = ''; while (my $line = <$client>) { $head .= $line; last if $line =~ /^\r?\n$/; }
  my ($path) = $head =~ /^\S+ (\S+)/;
  print "answered a request\n";
  print $client "HTTP/1.0 200 OK\r\nContent-Length: " . length($body) . "\r\n\r\n$body";
  close $client;
  if ($path eq '/quit') { print STDERR "quitting\n"; exit 3 }
}
`;

/** A client run inside the VM (`perl -e CLIENT <port> [path]`): GET on the port, retried while nothing listens yet. */
export const GUEST_HTTP_CLIENT = String.raw`
use IO::Socket::IP;
my ($port, $path) = (@ARGV, '/');
for (1 .. 50) { my $s = IO::Socket::IP->new(PeerHost => '::1', PeerPort => $port); if ($s) { print $s "GET $path HTTP/1.0\r\n\r\n"; local $/; my $r = <$s>; print $r; exit 0 } select(undef, undef, undef, 0.1) }
die "nothing listens on $port\n";
`;

/** Settings that deploy it from `app/`, serving on port 8080. */
export const DEPLOYED_SETTINGS = { install_command: 'sh install.sh', build_command: 'sh build.sh', run_command: 'perl server.pl 8080', working_directory: 'app' };

/** Commits the app to `repo` on `branch` (its build failing, with `brokenBuild`); returns the commit's sha. */
export function commitDeployedApp(host: GitHttpServer, repo: string, branch = 'main', options: { brokenBuild?: boolean; install?: string } = {}): string {
  return host.commit(
    repo,
    {
      'README.md': 'a web app\n',
      'app/install.sh': options.install ?? 'echo "installing dependencies"; echo deps > installed.txt\n',
      'app/build.sh': options.brokenBuild
        ? 'echo "compile error: missing semicolon at line 3" >&2; exit 2\n'
        : 'echo "building"; test -f installed.txt && echo "built from $(cat installed.txt)" > built.txt\n',
      'app/server.pl': DEPLOYED_SERVER,
    },
    branch,
  );
}
