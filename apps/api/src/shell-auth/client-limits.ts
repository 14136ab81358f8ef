import { Injectable } from '@nestjs/common';
import { isIPv6 } from 'node:net';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError } from '../http/http-error';

/** Sign-ins started from one client address in 15 minutes (each sends an e-mail). */
export const SIGN_INS_PER_ADDRESS = 20;
/** Other shell-auth calls from one address a minute (the CLI polls verify-key every 3 s). */
export const CHECKS_PER_ADDRESS = 120;

/**
 * IPv6 clients are limited by their /64 (one host commonly holds a whole /64), IPv4 ones by
 * address; an IPv4-mapped IPv6 address counts as its IPv4 address.
 */
export function rateKeyOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * Per client address, in this api process (rate-limiter-flexible's memory store): the limits an
 * address meets before the log is touched. The per-address limit multiplies with the number of
 * api processes; the per-e-mail limit is the sign-in decider's, the same for every process.
 */
@Injectable()
export class ClientLimits {
  private readonly signIns = new RateLimiterMemory({ points: SIGN_INS_PER_ADDRESS, duration: 15 * 60 });
  private readonly checks = new RateLimiterMemory({ points: CHECKS_PER_ADDRESS, duration: 60 });

  startSignIn(address: string): Promise<void> {
    return this.consume(this.signIns, address, 'too many sign-ins from this address');
  }

  check(address: string): Promise<void> {
    return this.consume(this.checks, address, 'too many requests from this address');
  }

  private async consume(limiter: RateLimiterMemory, address: string, what: string): Promise<void> {
    try {
      await limiter.consume(rateKeyOf(address));
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      const seconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      throw new HttpError(429, `${what}: try again in ${seconds} s`, { 'Retry-After': String(seconds) });
    }
  }
}
