/**
 * The VERS_URL people give the Vers CLI for this installation. The CLI derives two more places
 * from it: sign-in (shell-auth) at VERS_URL's scheme and host without a leading `api.`, on the
 * scheme's default port (it drops any port), and VMs at `<vm_id>.vm.<that host>:443` (a host
 * without `api.` means the hosted `vm.vers.sh`). So an installation whose website origin
 * (ARBOR_PUBLIC_URL) is `<scheme>://<ARBOR_EDGE_DOMAIN>` on the default port, the README's recipe,
 * is used as `<scheme>://api.<domain>`; any other (a quick start on localhost:3000) as its public
 * URL, where everything but `vers connect` works.
 */
export function versUrlOf(publicUrl: string, edgeDomain: string): string {
  const url = new URL(publicUrl);
  return url.port === '' && url.hostname === edgeDomain ? `${url.protocol}//api.${url.hostname}` : publicUrl;
}
