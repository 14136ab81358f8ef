import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { SystemVersionDto } from '@arbor/contracts';
import { Public } from '../auth/public.decorator';
import { readBuildInfo } from './build-info';

@ApiTags('system')
@Controller()
export class SystemController {
  private readonly build = readBuildInfo();

  @Public()
  @Get('api/v1/system/version')
  @ApiOkResponse({ type: SystemVersionDto })
  version(): SystemVersionDto {
    return { executable_name: 'orchestrator', workspace_version: this.build.version, git_hash: this.build.git_hash };
  }

  /** Unversioned liveness probe (documented in prose by the contract, not in its OpenAPI). */
  @Public()
  @Get('health')
  health(): { status: string } {
    return { status: 'ok' };
  }
}
