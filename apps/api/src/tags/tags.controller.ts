import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CreateCommitTagRequestDto, CreateCommitTagResponseDto, ListTagsResponseDto, TagInfoDto, UpdateCommitTagRequestDto } from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { ApiAsOfQuery, type AsOf, AsOfPipe } from '../time-travel/as-of';
import { ReadModelsAsOf } from '../time-travel/read-models-as-of';
import { CommitNames } from '../commits/commit-names';
import { CreateTagCommand, DeleteTagCommand, UpdateTagCommand } from './commands/tag-commands';
import { TagNamePipe } from './tag-name.pipe';
import { presentTag } from './tag-presenter';
import { TagReadModel } from './tag-read-model';

/** Org-scoped commit tags: movable names for commits. */
@ApiTags('commit_tags')
@ApiBearerAuth()
@Controller('api/v1/commit_tags')
export class TagsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly tags: TagReadModel,
    private readonly asOf: ReadModelsAsOf,
    private readonly names: CommitNames,
  ) {}

  @Get()
  @ApiOkResponse({ type: ListTagsResponseDto })
  @ApiAsOfQuery()
  list(@Ctx() ctx: RequestContext, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<ListTagsResponseDto> {
    const org_id = ctx.principal.org_id;
    return this.asOf.read(asOf, this.tags, async (tags) => {
      const found = await tags.list(org_id);
      const name = await this.names.namingFor(org_id, found.map((tag) => tag.commit_id));
      return { tags: found.map((tag) => presentTag(tag, name)) };
    });
  }

  @AnyMember('creates a tag of the caller')
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ type: CreateCommitTagResponseDto, description: '409 when the org already has a tag of that name' })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateCommitTagRequestDto): Promise<CreateCommitTagResponseDto> {
    return this.commands.execute(new CreateTagCommand(ctx, body.tag_name, body.commit_id.toLowerCase(), body.description ?? null));
  }

  @Get(':tag_name')
  @ApiOkResponse({ type: TagInfoDto })
  @ApiAsOfQuery()
  get(@Ctx() ctx: RequestContext, @Param('tag_name', TagNamePipe) tagName: string, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<TagInfoDto> {
    const org_id = ctx.principal.org_id;
    return this.asOf.read(asOf, this.tags, async (tags) => {
      const tag = await tags.get(org_id, tagName);
      return presentTag(tag, await this.names.namingFor(org_id, [tag.commit_id]));
    });
  }

  @Changes('commit_tag')
  @Patch(':tag_name')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'commit_id moves the tag; description: absent keeps, null clears, text sets' })
  async update(@Ctx() ctx: RequestContext, @Param('tag_name', TagNamePipe) tagName: string, @Body() body: UpdateCommitTagRequestDto): Promise<void> {
    await this.commands.execute(new UpdateTagCommand(ctx, tagName, body.commit_id?.toLowerCase(), body.description));
  }

  @Changes('commit_tag')
  @Delete(':tag_name')
  @HttpCode(204)
  @ApiNoContentResponse()
  async delete(@Ctx() ctx: RequestContext, @Param('tag_name', TagNamePipe) tagName: string): Promise<void> {
    await this.commands.execute(new DeleteTagCommand(ctx, tagName));
  }
}
