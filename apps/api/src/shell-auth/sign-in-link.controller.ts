import { Controller, Get, Post, Query, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/public.decorator';
import { ConfirmSignInCommand } from './commands/confirm-sign-in.command';
import { PreviewSignInQuery } from './queries/shell-auth.queries';
import { renderSignInPage, type SignInPage } from './sign-in-page';

/**
 * The page a sign-in link opens (`ARBOR_PUBLIC_URL/arbor/v1/shell-auth/verify?token=…`): GET
 * shows what would be confirmed, and a button; only the button's POST follows the link, so a
 * mail scanner that fetches links does not use it up. No framing, no referrer (the token is in
 * the URL), no caching.
 */
@Public()
@ApiExcludeController()
@Controller('arbor/v1/shell-auth')
export class SignInLinkController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Get('verify')
  async show(@Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.queries.execute(new PreviewSignInQuery(token)));
  }

  @Post('verify')
  async confirm(@Query('token') token: unknown, @Res() reply: FastifyReply): Promise<void> {
    send(reply, await this.commands.execute(new ConfirmSignInCommand(token)));
  }
}

function send(reply: FastifyReply, page: SignInPage): void {
  reply
    .status(page.status)
    .headers({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'Referrer-Policy': 'no-referrer',
      'X-Frame-Options': 'DENY',
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    })
    .send(renderSignInPage(page));
}
