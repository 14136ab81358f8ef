import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { ListPublicRepositoriesResponseDto, ListRepoTagsResponseDto, PublicRepositoryInfoDto, RepoTagInfoDto } from '@arbor/contracts';
import { Public } from '../auth/public.decorator';
import { AS_IN_LOG } from '../commits/commit-names';
import { presentPublicRepository, presentRepoTag } from './repository-presenter';
import { RepoNamePipe } from './repo-name.pipe';
import { RepositoryReadModel } from './repository-read-model';

/**
 * Public repositories of every org, by `<org_name>/<repo_name>`: readable without a key, so by
 * nobody in particular: their tags' commits show as their ids in the log (an org's chosen id names
 * its commit only in its own org).
 */
@ApiTags('public_repositories')
@Public()
@Controller('api/v1/public/repositories')
export class PublicRepositoriesController {
  constructor(private readonly repositories: RepositoryReadModel) {}

  @Get()
  @ApiOkResponse({ type: ListPublicRepositoriesResponseDto })
  async list(): Promise<ListPublicRepositoriesResponseDto> {
    return { repositories: (await this.repositories.listPublic()).map(presentPublicRepository) };
  }

  @Get(':org_name/:repo_name')
  @ApiOkResponse({ type: PublicRepositoryInfoDto })
  async get(@Param('org_name') org: string, @Param('repo_name', RepoNamePipe) name: string): Promise<PublicRepositoryInfoDto> {
    return presentPublicRepository(await this.repositories.getPublic(org, name));
  }

  @Get(':org_name/:repo_name/tags')
  @ApiOkResponse({ type: ListRepoTagsResponseDto })
  async listTags(@Param('org_name') org: string, @Param('repo_name', RepoNamePipe) name: string): Promise<ListRepoTagsResponseDto> {
    const repository = await this.repositories.getPublic(org, name);
    return { repository: repository.name, tags: (await this.repositories.tags(repository)).map((tag) => presentRepoTag(tag, AS_IN_LOG)) };
  }

  @Get(':org_name/:repo_name/tags/:tag_name')
  @ApiOkResponse({ type: RepoTagInfoDto })
  async getTag(@Param('org_name') org: string, @Param('repo_name', RepoNamePipe) name: string, @Param('tag_name') tagName: string): Promise<RepoTagInfoDto> {
    return presentRepoTag(await this.repositories.tag(await this.repositories.getPublic(org, name), tagName), AS_IN_LOG);
  }
}
