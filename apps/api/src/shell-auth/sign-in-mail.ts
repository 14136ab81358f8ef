import type { MailMessage } from '../mail/mailer';

export interface SignInMailFacts {
  email: string;
  link: string;
  is_new_user: boolean;
  ssh_key_fingerprint: string;
  note: string | null;
  client_address: string;
  ttl_minutes: number;
}

/**
 * The mail with the sign-in link: what was asked, from where, with which key, so the reader can
 * tell their own request from someone else's (following a stranger's link would let the
 * stranger's key in).
 */
export function signInMail(facts: SignInMailFacts): MailMessage {
  const lines = [
    facts.is_new_user ? `Someone asked to create an Arbor account for ${facts.email} and sign in.` : `Someone asked to sign in to Arbor as ${facts.email}.`,
    '',
    ...(facts.note ? [`  Request:  ${facts.note.replace(/\s+/g, ' ')}`] : []),
    `  SSH key:  ${facts.ssh_key_fingerprint}`,
    `  From:     ${facts.client_address}`,
    '',
    `If that was you, open this link within ${facts.ttl_minutes} minutes and confirm (it works once):`,
    '',
    `  ${facts.link}`,
    '',
    'If it was not you, ignore this mail: nothing happens unless the link is followed and confirmed.',
    '',
  ];
  return { to: facts.email, subject: 'Confirm your sign-in to Arbor', text: lines.join('\n') };
}
