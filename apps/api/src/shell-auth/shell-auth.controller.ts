import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ShellAuthCreatedKeyDto,
  ShellAuthCreateKeyRequestDto,
  ShellAuthKeyRequestDto,
  ShellAuthNotVerifiedDto,
  ShellAuthPublicKeyRequestDto,
  ShellAuthPublicKeyUnknownDto,
  ShellAuthPublicKeyVerifiedDto,
  ShellAuthStartRequestDto,
  ShellAuthStartResponseDto,
  ShellAuthVerifiedDto,
} from '@arbor/contracts';
import { Public } from '../auth/public.decorator';
import { CreateSignInKeyCommand } from './commands/create-sign-in-key.command';
import { StartSignInCommand } from './commands/start-sign-in.command';
import { VerifyPublicKeyQuery, VerifySignInQuery } from './queries/shell-auth.queries';

/** The client's address: the socket's, or X-Forwarded-For's as far as ARBOR_TRUST_PROXY trusts it. */
const clientAddressOf = (request: FastifyRequest) => request.ip ?? request.socket.remoteAddress ?? 'unknown';

/**
 * Shell-auth, as the Vers CLI speaks it (`vers signup`, `vers login --git`): no bearer key, JSON,
 * 200 on success. The CLI calls it on the origin it derives from VERS_URL by dropping a leading
 * `api.`, so Arbor serves it beside the API on its own origin.
 */
@ApiTags('shell-auth')
@Public()
@Controller('api/shell-auth')
export class ShellAuthController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOkResponse({ type: ShellAuthStartResponseDto, description: 'A link was mailed. 400 bad address or key; 403 an alias (a+x@…) whose base account is missing or unverified, or sign-up by invitation only; 409 the key is bound to another address; 429 too many (Retry-After)' })
  start(@Body() body: ShellAuthStartRequestDto, @Req() request: FastifyRequest): Promise<ShellAuthStartResponseDto> {
    return this.commands.execute(new StartSignInCommand(body, clientAddressOf(request)));
  }

  @Post('verify-key')
  @HttpCode(200)
  @ApiOkResponse({ type: ShellAuthVerifiedDto })
  @ApiResponse({ status: 401, type: ShellAuthNotVerifiedDto, description: 'Not (or no longer) verified: the reason says why' })
  async verifyKey(@Body() body: ShellAuthKeyRequestDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<object> {
    const answer = await this.queries.execute(new VerifySignInQuery(body, clientAddressOf(request)));
    reply.status(answer.status);
    return answer.body;
  }

  /** The answer holds the key: written here, never recorded. */
  @Post('api-keys')
  @ApiOkResponse({ type: ShellAuthCreatedKeyDto, description: '400 bad label (5 to 100 characters) or no org; 401 not verified; 404 org unknown or not yours' })
  async createKey(@Body() body: ShellAuthCreateKeyRequestDto, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    reply.status(200).send(await this.commands.execute(new CreateSignInKeyCommand(body, clientAddressOf(request))));
  }

  @Post('verify-public-key')
  @HttpCode(200)
  @ApiOkResponse({ type: ShellAuthPublicKeyVerifiedDto })
  @ApiResponse({ status: 404, type: ShellAuthPublicKeyUnknownDto })
  async verifyPublicKey(@Body() body: ShellAuthPublicKeyRequestDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<object> {
    const answer = await this.queries.execute(new VerifyPublicKeyQuery(body, clientAddressOf(request)));
    reply.status(answer.status);
    return answer.body;
  }
}
