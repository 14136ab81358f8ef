import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module';
import { AccountController } from './account.controller';
import { AccountReadModel } from './account-read-model';
import { CreateApiKeyHandler, RevokeApiKeyHandler } from './commands/api-key-command.handlers';
import { ChangeMemberRoleHandler, InviteMemberHandler, RemoveMemberHandler } from './commands/member-command.handlers';

/** The caller's account (`/arbor/v1/whoami`, `/keys`, `/org`, `/org/members`). */
@Module({
  imports: [MailModule],
  controllers: [AccountController],
  providers: [AccountReadModel, CreateApiKeyHandler, RevokeApiKeyHandler, InviteMemberHandler, ChangeMemberRoleHandler, RemoveMemberHandler],
})
export class IdentityModule {}
