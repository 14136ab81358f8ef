import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module';
import { ClientLimits } from './client-limits';
import { ConfirmSignInHandler } from './commands/confirm-sign-in.handler';
import { CreateSignInKeyHandler } from './commands/create-sign-in-key.handler';
import { StartSignInHandler } from './commands/start-sign-in.handler';
import { PreviewSignInHandler, VerifyPublicKeyHandler, VerifySignInHandler } from './queries/shell-auth-query.handlers';
import { ShellAuthController } from './shell-auth.controller';
import { SignInLinkController } from './sign-in-link.controller';
import { SignInLookup } from './sign-in-lookup';

/** Sign-up and sign-in by e-mail (`/api/shell-auth…`) and the page its links open. */
@Module({
  imports: [MailModule],
  controllers: [ShellAuthController, SignInLinkController],
  providers: [ClientLimits, SignInLookup, StartSignInHandler, ConfirmSignInHandler, CreateSignInKeyHandler, VerifySignInHandler, VerifyPublicKeyHandler, PreviewSignInHandler],
})
export class ShellAuthModule {}
