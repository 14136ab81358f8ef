import { hostname } from 'node:os';
import { positiveSetting } from './settings';

/** How people sign in (`/api/shell-auth`): where mail goes, what links point at, who may sign up. */
export interface ShellAuthSettings {
  /** `smtp://user:pass@host:587` or `smtps://…:465` (ARBOR_SMTP_URL); null: links are written to the log. */
  smtpUrl: string | null;
  /** The From of sign-in mail (ARBOR_MAIL_FROM; default `Arbor <arbor@<host name>>`). */
  mailFrom: string;
  /** The origin links in mail point at (ARBOR_PUBLIC_URL; default `http://localhost:<PORT>`), no trailing slash. */
  publicUrl: string;
  /** Whether ARBOR_PUBLIC_URL was set (mail to anyone but this host's users needs it). */
  publicUrlSet: boolean;
  /** `open`: anyone whose address is verified gets an account and an org; `invite`: only addresses an org invited (ARBOR_SIGNUP). */
  signup: 'open' | 'invite';
  /** How long a sign-in link works (ARBOR_SIGNIN_LINK_TTL_MS; the contract's ten minutes by default). */
  linkTtlMs: number;
}

export function loadShellAuthSettings(env: NodeJS.ProcessEnv, port: number): ShellAuthSettings {
  const smtpUrl = env.ARBOR_SMTP_URL || null;
  if (smtpUrl && !/^smtps?:\/\/[^/]/.test(smtpUrl)) throw new Error(`ARBOR_SMTP_URL must be smtp://[user:password@]host[:port] or smtps://… (got "${smtpUrl.replace(/\/\/[^@/]*@/, '//***@')}")`);
  const publicUrl = (env.ARBOR_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/.test(publicUrl)) throw new Error(`ARBOR_PUBLIC_URL must be an http(s) origin such as https://arbor.example.com (got "${env.ARBOR_PUBLIC_URL}")`);
  const signup = (env.ARBOR_SIGNUP || 'open').toLowerCase();
  if (signup !== 'open' && signup !== 'invite') throw new Error(`ARBOR_SIGNUP must be open or invite (got "${env.ARBOR_SIGNUP}")`);
  return {
    smtpUrl,
    mailFrom: env.ARBOR_MAIL_FROM || `Arbor <arbor@${hostname()}>`,
    publicUrl,
    publicUrlSet: Boolean(env.ARBOR_PUBLIC_URL),
    signup,
    linkTtlMs: positiveSetting(env, 'ARBOR_SIGNIN_LINK_TTL_MS', 10 * 60_000),
  };
}

/**
 * Which proxies the API trusts, from ARBOR_TRUST_PROXY (proxy-addr's forms, as Express's `trust proxy` took them): unset, the client address is the socket's;
 * behind a reverse proxy, name it (`loopback`, an address or subnet, a comma-separated list, or
 * a hop count) so X-Forwarded-For gives the client's address (rate limits, sign-in mail).
 */
export function loadTrustProxy(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.ARBOR_TRUST_PROXY?.trim();
  if (!raw || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}
