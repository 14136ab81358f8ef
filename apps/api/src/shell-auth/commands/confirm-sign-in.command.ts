import { Command } from '@nestjs/cqrs';
import type { SignInPage } from '../sign-in-page';

/** POST /arbor/v1/shell-auth/verify?token=…: the sign-in link, confirmed. Answers the page to show. */
export class ConfirmSignInCommand extends Command<SignInPage> {
  constructor(readonly token: unknown) {
    super();
  }
}
