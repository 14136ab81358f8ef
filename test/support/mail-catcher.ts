import { simpleParser, type ParsedMail } from 'mailparser';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface MailCatcher {
  /** `smtp://127.0.0.1:<port>`: ARBOR_SMTP_URL. */
  url: string;
  /** Every message delivered so far, parsed. */
  messages: ParsedMail[];
  /** The next message to `to` not taken before (waits for it). */
  next(to: string, timeoutMs?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

const recipientsOf = (mail: ParsedMail) => [mail.to ?? []].flat().flatMap((address) => address.value.map((v) => v.address?.toLowerCase()));

/**
 * A real SMTP server on localhost (smtp-server, nodemailer's own server library): it accepts every
 * message and keeps it, parsed by mailparser, for the test to read as a mail client would.
 */
export async function startMailCatcher(): Promise<MailCatcher> {
  const messages: ParsedMail[] = [];
  const taken = new Set<ParsedMail>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(
        (mail) => {
          messages.push(mail);
          callback();
        },
        (error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async next(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const mail = messages.find((m) => !taken.has(m) && recipientsOf(m).includes(to.toLowerCase()));
        if (mail) {
          taken.add(mail);
          return mail;
        }
        if (Date.now() > deadline) throw new Error(`no mail to ${to} within ${timeoutMs} ms (${messages.length} delivered)`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
