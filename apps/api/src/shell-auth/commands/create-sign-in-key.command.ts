import { Command } from '@nestjs/cqrs';
import type { ShellAuthCreateKeyRequestDto, ShellAuthCreatedKeyDto } from '@arbor/contracts';

/** POST /api/shell-auth/api-keys: the one API key a confirmed sign-in allows. */
export class CreateSignInKeyCommand extends Command<ShellAuthCreatedKeyDto> {
  constructor(
    readonly body: ShellAuthCreateKeyRequestDto,
    readonly client_address: string,
  ) {
    super();
  }
}
