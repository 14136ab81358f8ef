import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import {
  ChangeMemberRoleRequestDto,
  CreateApiKeyRequestDto,
  CreatedApiKeyDto,
  InviteMemberRequestDto,
  ListApiKeysResponseDto,
  ListOrgMembersResponseDto,
  OrgInfoDto,
  OrgMemberDto,
  WhoAmIDto,
} from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { UuidParamPipe } from '../http/uuid-param.pipe';
import { AccountReadModel } from './account-read-model';
import { CreateApiKeyCommand, RevokeApiKeyCommand } from './commands/api-key-commands';
import { ChangeMemberRoleCommand, InviteMemberCommand, RemoveMemberCommand } from './commands/member-commands';

/** Who may change members: the membership rule of org-roles.ts, applied by the member handlers. */
const MEMBERSHIP_RULE = 'the membership rule decides (org-roles.ts requireMembershipChange): owners and admins manage members, anyone may leave';

/**
 * The caller's account under Arbor's own prefix `/arbor/v1` (outside the Vers API's paths, so
 * no Vers client meets them): who they are, their API keys, their org's members.
 */
@ApiTags('account')
@ApiBearerAuth()
@Controller('arbor/v1')
export class AccountController {
  constructor(
    private readonly commands: CommandBus,
    private readonly account: AccountReadModel,
  ) {}

  @Get('whoami')
  @ApiOkResponse({ type: WhoAmIDto })
  async whoami(@Ctx() { principal }: RequestContext): Promise<WhoAmIDto> {
    const [user, org] = await Promise.all([this.account.user(principal.user_id), this.account.org(principal.org_id)]);
    return { user_id: principal.user_id, email: user?.email ?? null, org_id: org.org_id, org_name: org.name, role: principal.role, api_key_id: principal.key_id, is_operator: principal.is_operator };
  }

  @Get('keys')
  @ApiOkResponse({ type: ListApiKeysResponseDto })
  async keys(@Ctx() { principal }: RequestContext): Promise<ListApiKeysResponseDto> {
    return { api_keys: await this.account.keys(principal) };
  }

  /** The answer holds the key: written here, so the idempotency record (in the log) never does. */
  @AnyMember('makes a key of the caller')
  @Post('keys')
  @ApiCreatedResponse({ type: CreatedApiKeyDto, description: 'The key is in this answer only. 400 for a label not 5 to 100 characters' })
  async createKey(@Ctx() ctx: RequestContext, @Body() body: CreateApiKeyRequestDto, @Res() reply: FastifyReply): Promise<void> {
    reply.status(201).send(await this.commands.execute(new CreateApiKeyCommand(ctx, body.label)));
  }

  @Changes('api_key')
  @Delete('keys/:key_id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Revoked: every api process refuses it within half a second. 403 for another member\'s key (unless owner or admin), 404 for a key the org does not have' })
  async revokeKey(@Ctx() ctx: RequestContext, @Param('key_id', UuidParamPipe) keyId: string): Promise<void> {
    await this.commands.execute(new RevokeApiKeyCommand(ctx, keyId));
  }

  @Get('org')
  @ApiOkResponse({ type: OrgInfoDto })
  async org(@Ctx() { principal }: RequestContext): Promise<OrgInfoDto> {
    const org = await this.account.org(principal.org_id);
    return { org_id: org.org_id, name: org.name, created_at: org.created_at, role: principal.role };
  }

  @Get('org/members')
  @ApiOkResponse({ type: ListOrgMembersResponseDto })
  async members(@Ctx() { principal }: RequestContext): Promise<ListOrgMembersResponseDto> {
    return { members: await this.account.members(principal.org_id) };
  }

  @AnyMember(MEMBERSHIP_RULE)
  @Post('org/members')
  @ApiCreatedResponse({ type: OrgMemberDto, description: '403 for a member (only owners and admins invite; only owners make owners), 409 for a member already' })
  invite(@Ctx() ctx: RequestContext, @Body() body: InviteMemberRequestDto): Promise<OrgMemberDto> {
    return this.commands.execute(new InviteMemberCommand(ctx, body.email, body.role));
  }

  @AnyMember(MEMBERSHIP_RULE)
  @Patch('org/members/:user_id')
  @ApiOkResponse({ type: OrgMemberDto, description: '409 when it would leave the org without an owner' })
  changeRole(@Ctx() ctx: RequestContext, @Param('user_id', UuidParamPipe) userId: string, @Body() body: ChangeMemberRoleRequestDto): Promise<OrgMemberDto> {
    return this.commands.execute(new ChangeMemberRoleCommand(ctx, userId, body.role));
  }

  @AnyMember(MEMBERSHIP_RULE)
  @Delete('org/members/:user_id')
  @HttpCode(204)
  @ApiNoContentResponse({ description: "Their keys in the org stop working and are revoked. 409 for the org's last owner" })
  async removeMember(@Ctx() ctx: RequestContext, @Param('user_id', UuidParamPipe) userId: string): Promise<void> {
    await this.commands.execute(new RemoveMemberCommand(ctx, userId));
  }
}
