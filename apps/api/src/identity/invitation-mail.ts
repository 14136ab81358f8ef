import type { MailMessage } from '../mail/mailer';

/** The mail an invited member gets: which org, and how to sign in with the Vers CLI. */
export function invitationMail(invite: { email: string; role: string; org_name: string; inviter: string | null; public_url: string; vers_url: string }): MailMessage {
  const who = invite.inviter ?? 'An administrator';
  return {
    to: invite.email,
    subject: `You are a member of ${invite.org_name} on Arbor`,
    text: [
      `${who} added you (${invite.email}) to the org "${invite.org_name}" on Arbor, ${invite.public_url}, as ${invite.role}.`,
      '',
      'To sign in with the Vers CLI, from a machine whose git e-mail is this address:',
      '',
      `  VERS_URL=${invite.vers_url} vers login --git`,
      '',
      'It sends you a link to confirm; once you follow it, the CLI gets an API key of yours.',
      '',
    ].join('\n'),
  };
}
