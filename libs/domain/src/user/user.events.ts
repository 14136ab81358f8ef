import { eventTypes, type DomainEvent } from '../shared/decider';

/**
 * Stream `user-<id>`: a person. Users with an address are registered when an org invites them or
 * when they first follow a sign-in link (their id follows from the address, so the stream is the
 * address's reservation); the first start's admin is a user without one.
 */
export type UserRegistered = DomainEvent<'UserRegistered', { user_id: string; email: string | null; registered_at: string }>;
/** The user followed a link sent to the address: it is theirs. */
export type EmailVerified = DomainEvent<'EmailVerified', { user_id: string; email: string; verified_at: string }>;
export type UserEvent = UserRegistered | EmailVerified;
export const USER_EVENT_TYPES = eventTypes<UserEvent>()('UserRegistered', 'EmailVerified');
