/**
 * A small HTTP server for inside a VM (the edge's benchmark and tests), in perl (perl-base is in every Debian root, both drivers'
 * images): listens on `::` (dual stack), answers every request with the VM's hostname, the path,
 * the Host it was sent and its port, as JSON.
 */
export const GUEST_HTTP_SERVER = String.raw`
use strict; use IO::Socket::IP;
$SIG{PIPE} = 'IGNORE'; # a client gone before its answer must not end the server
my $port = shift or die "usage: httpd.pl PORT\n";
my $server = IO::Socket::IP->new(LocalHost => '::', LocalPort => $port, Listen => 64, ReuseAddr => 1, V6Only => 0) or die "listen: $@\n";
open(my $ready, '>', "/root/httpd-$port.ready"); close $ready;
open(my $f, '<', '/etc/hostname'); my $hostname = <$f>; chomp $hostname; close $f;
while (my $client = $server->accept) {
  my $head = '';
  while (my $line = <$client>) { $head .= $line; last if $line =~ /^\r?\n$/; }
  my ($path) = $head =~ /^\S+ (\S+)/; my ($host) = $head =~ /^host:\s*(\S+)/mi;
  my $body = qq({"hostname":"$hostname","path":"$path","host":"$host","port":$port});
  print $client "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " . length($body) . "\r\nConnection: close\r\n\r\n$body";
  close $client;
}
`;

/**
 * Starts the server on `port` in the VM through the API (a file, then a detached exec) and answers
 * once it listens: under TCG perl may take seconds to get there, so the exec waits for the
 * server's ready file (or its error) instead of a fixed pause.
 */
export async function startGuestHttpServer(request: (method: string, path: string, options: { body: unknown }) => Promise<{ status: number; json: any }>, vm_id: string, port: number): Promise<void> {
  const put = await request('PUT', `/api/v1/vm/${vm_id}/files`, { body: { path: '/root/httpd.pl', content_b64: Buffer.from(GUEST_HTTP_SERVER).toString('base64') } });
  if (put.status !== 200) throw new Error(`writing the server into ${vm_id}: ${put.status}`);
  const started = await request('POST', `/api/v1/vm/${vm_id}/exec`, { body: { command: ['sh', '-c', `rm -f /root/httpd-${port}.ready; setsid perl /root/httpd.pl ${port} </dev/null >/root/httpd-${port}.log 2>&1 & i=0; while [ ! -e /root/httpd-${port}.ready ] && [ ! -s /root/httpd-${port}.log ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; cat /root/httpd-${port}.log; test -e /root/httpd-${port}.ready || echo "not listening after 60 s"`] } });
  if (started.status !== 200 || started.json.exit_code !== 0 || started.json.stdout) throw new Error(`starting the server in ${vm_id}: ${JSON.stringify(started.json)}`);
}
