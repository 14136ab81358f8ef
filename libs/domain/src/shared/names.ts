import { invalid } from './domain-error';

/** Names of tags, repositories and orgs: letters, digits, ".", "_" and "-", 1–64 characters. */
export const NAME_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** The name, or a 400 that says the rule (`what` is the field: "tag_name", "name", …). */
export function requireName(what: string, name: string): string {
  if (!NAME_PATTERN.test(name)) throw invalid(`${what} may hold only letters, digits, ".", "_" and "-" (1-64 characters)`);
  return name;
}
