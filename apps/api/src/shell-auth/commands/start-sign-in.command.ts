import { Command } from '@nestjs/cqrs';
import type { ShellAuthStartRequestDto, ShellAuthStartResponseDto } from '@arbor/contracts';

/** POST /api/shell-auth: mails a sign-in link for an address and an SSH key. */
export class StartSignInCommand extends Command<ShellAuthStartResponseDto> {
  constructor(
    readonly body: ShellAuthStartRequestDto,
    readonly client_address: string,
  ) {
    super();
  }
}
