import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import {
  CreateRepoTagRequestDto,
  CreateRepoTagResponseDto,
  CreateRepositoryRequestDto,
  CreateRepositoryResponseDto,
  ForkRepositoryRequestDto,
  ForkRepositoryResponseDto,
  ListRepoTagsResponseDto,
  ListRepositoriesResponseDto,
  RepoTagInfoDto,
  RepositoryInfoDto,
  SetRepositoryVisibilityRequestDto,
  UpdateRepoTagRequestDto,
} from '@arbor/contracts';
import { AnyMember, Changes } from '../auth/changes.decorator';
import { Ctx, type RequestContext } from '../auth/request-context.decorator';
import { CommitNames } from '../commits/commit-names';
import { ApiAsOfQuery, type AsOf, AsOfPipe } from '../time-travel/as-of';
import { ReadModelsAsOf } from '../time-travel/read-models-as-of';
import { ForkRepositoryCommand } from './commands/fork-repository.command';
import { CreateRepoTagCommand, DeleteRepoTagCommand, UpdateRepoTagCommand } from './commands/repo-tag-commands';
import { CreateRepositoryCommand, DeleteRepositoryCommand, SetRepositoryVisibilityCommand } from './commands/repository-commands';
import { presentRepoTag, presentRepository } from './repository-presenter';
import { RepoNamePipe } from './repo-name.pipe';
import { RepositoryReadModel } from './repository-read-model';

/** The org's repositories and their tags (`<repo>:<tag>` references to commits), and fork. */
@ApiTags('repositories')
@ApiBearerAuth()
@Controller('api/v1/repositories')
export class RepositoriesController {
  constructor(
    private readonly commands: CommandBus,
    private readonly repositories: RepositoryReadModel,
    private readonly names: CommitNames,
    private readonly asOf: ReadModelsAsOf,
  ) {}

  @Get()
  @ApiOkResponse({ type: ListRepositoriesResponseDto })
  async list(@Ctx() ctx: RequestContext): Promise<ListRepositoriesResponseDto> {
    return { repositories: (await this.repositories.list(ctx.principal.org_id)).map(presentRepository) };
  }

  @AnyMember('creates a repository of the caller')
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ type: CreateRepositoryResponseDto, description: '400 for a bad name, 409 when the org has a repository of that name' })
  create(@Ctx() ctx: RequestContext, @Body() body: CreateRepositoryRequestDto): Promise<CreateRepositoryResponseDto> {
    return this.commands.execute(new CreateRepositoryCommand(ctx, body.name, body.description ?? null));
  }

  /** Before `:repo_name`, so "fork" is not read as a repository's name. */
  @AnyMember('creates a VM, a commit and a tag of the caller (and the repository, if missing)')
  @Post('fork')
  @HttpCode(201)
  @ApiCreatedResponse({ type: ForkRepositoryResponseDto, description: '404 when the source is missing or not public; 409 when the target tag exists' })
  fork(@Ctx() ctx: RequestContext, @Body() body: ForkRepositoryRequestDto): Promise<ForkRepositoryResponseDto> {
    return this.commands.execute(new ForkRepositoryCommand(ctx, body));
  }

  @Get(':repo_name')
  @ApiOkResponse({ type: RepositoryInfoDto })
  async get(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string): Promise<RepositoryInfoDto> {
    return presentRepository(await this.repositories.get(ctx.principal.org_id, name));
  }

  @Changes('repository')
  @Delete(':repo_name')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'Its tags go with it; its commits stay' })
  async delete(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string): Promise<void> {
    await this.commands.execute(new DeleteRepositoryCommand(ctx, name));
  }

  @Changes('repository')
  @Patch(':repo_name/visibility')
  @HttpCode(204)
  @ApiNoContentResponse()
  async setVisibility(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string, @Body() body: SetRepositoryVisibilityRequestDto): Promise<void> {
    await this.commands.execute(new SetRepositoryVisibilityCommand(ctx, name, body.is_public));
  }

  @Get(':repo_name/tags')
  @ApiOkResponse({ type: ListRepoTagsResponseDto })
  @ApiAsOfQuery()
  listTags(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string, @Query('as_of', AsOfPipe) asOf?: AsOf): Promise<ListRepoTagsResponseDto> {
    const org_id = ctx.principal.org_id;
    return this.asOf.read(asOf, this.repositories, async (repositories) => {
      const repository = await repositories.get(org_id, name);
      const tags = await repositories.tags(repository);
      const commitName = await this.names.namingFor(org_id, tags.map((tag) => tag.commit_id));
      return { repository: repository.name, tags: tags.map((tag) => presentRepoTag(tag, commitName)) };
    });
  }

  @AnyMember('creates a tag of the caller in a repository of the org')
  @Post(':repo_name/tags')
  @HttpCode(201)
  @ApiCreatedResponse({ type: CreateRepoTagResponseDto, description: '404 repository or commit; 409 when the tag exists' })
  createTag(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string, @Body() body: CreateRepoTagRequestDto): Promise<CreateRepoTagResponseDto> {
    return this.commands.execute(new CreateRepoTagCommand(ctx, name, body.tag_name, body.commit_id.toLowerCase(), body.description ?? null));
  }

  @Get(':repo_name/tags/:tag_name')
  @ApiOkResponse({ type: RepoTagInfoDto })
  @ApiAsOfQuery()
  getTag(
    @Ctx() ctx: RequestContext,
    @Param('repo_name', RepoNamePipe) name: string,
    @Param('tag_name') tagName: string,
    @Query('as_of', AsOfPipe) asOf?: AsOf,
  ): Promise<RepoTagInfoDto> {
    const org_id = ctx.principal.org_id;
    return this.asOf.read(asOf, this.repositories, async (repositories) => {
      const tag = await repositories.tag(await repositories.get(org_id, name), tagName);
      return presentRepoTag(tag, await this.names.namingFor(org_id, [tag.commit_id]));
    });
  }

  @Changes('repo_tag')
  @Patch(':repo_name/tags/:tag_name')
  @HttpCode(204)
  @ApiNoContentResponse({ description: 'commit_id moves the tag; description: absent keeps, null clears, text sets; 400 when neither' })
  async updateTag(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string, @Param('tag_name') tagName: string, @Body() body: UpdateRepoTagRequestDto): Promise<void> {
    await this.commands.execute(new UpdateRepoTagCommand(ctx, name, tagName, body.commit_id?.toLowerCase(), body.description));
  }

  @Changes('repo_tag')
  @Delete(':repo_name/tags/:tag_name')
  @HttpCode(204)
  @ApiNoContentResponse()
  async deleteTag(@Ctx() ctx: RequestContext, @Param('repo_name', RepoNamePipe) name: string, @Param('tag_name') tagName: string): Promise<void> {
    await this.commands.execute(new DeleteRepoTagCommand(ctx, name, tagName));
  }
}
