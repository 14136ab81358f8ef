import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Transporter } from 'nodemailer';
import { ARBOR_CONFIG, type ArborConfig } from '@arbor/application';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** `sent` over SMTP, or `logged`: no SMTP server is configured, so the message went to the log. */
export type MailOutcome = 'sent' | 'logged';

/**
 * Mail over SMTP (nodemailer, `ARBOR_SMTP_URL`, from `ARBOR_MAIL_FROM`). With no SMTP server
 * configured each message is written to the log, saying why, so an installation without mail
 * still works for whoever reads its log (the operator). Delivery is the SMTP server's: a message
 * it accepted is sent; one it refused, or could not be reached for, is an error for the caller.
 */
@Injectable()
export class Mailer implements OnApplicationShutdown {
  private readonly logger = new Logger('mail');
  private readonly smtpUrl: string | null;
  /** Opened with the first mail: nodemailer is loaded then, not at every start. */
  private transport: Transporter | null = null;
  private readonly from: string;

  constructor(@Inject(ARBOR_CONFIG) config: ArborConfig) {
    const { smtpUrl, mailFrom, publicUrl, publicUrlSet } = config.shellAuth;
    this.from = mailFrom;
    this.smtpUrl = smtpUrl;
    if (!smtpUrl) this.logger.warn('no SMTP server configured (ARBOR_SMTP_URL is unset): sign-in links and invitations are written to this log instead of mailed');
    else if (!publicUrlSet) this.logger.warn(`ARBOR_PUBLIC_URL is unset: links in mail point at ${publicUrl}, which only this host can open`);
  }

  async send(message: MailMessage): Promise<MailOutcome> {
    if (!this.smtpUrl) {
      this.logger.warn(`no SMTP server configured (ARBOR_SMTP_URL), so this mail to ${message.to} is written here instead of sent:\n  Subject: ${message.subject}\n\n${message.text.replace(/^/gm, '  ')}`);
      return 'logged';
    }
    await this.openTransport(this.smtpUrl).sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text });
    return 'sent';
  }

  private openTransport(url: string): Transporter {
    if (!this.transport) {
      const { createTransport } = require('nodemailer') as typeof import('nodemailer');
      // Short timeouts: a sign-in waits for its mail, and a dead server must not hold it for minutes.
      this.transport = createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as Parameters<typeof createTransport>[0]);
    }
    return this.transport;
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}
