import type { DomainCommand } from '../shared/decider';

/** Registers a user (an invitation, the first start's admin); an address stays unverified until followed. */
export type RegisterUser = DomainCommand<'RegisterUser', { user_id: string; email: string | null; now: string }>;
/** A sign-in link sent to the address was followed: registers the user too, if need be. */
export type VerifyEmail = DomainCommand<'VerifyEmail', { user_id: string; email: string; now: string }>;
export type UserCommand = RegisterUser | VerifyEmail;
