import { Module } from '@nestjs/common';
import { Mailer } from './mailer';

/** Outgoing mail (sign-in links, invitations): one SMTP transport for the api process. */
@Module({ providers: [Mailer], exports: [Mailer] })
export class MailModule {}
