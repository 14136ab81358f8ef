import { Controller, Get, Header, Headers, Inject, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ARBOR_CONFIG, type ArborConfig } from '@arbor/application';
import { collectProcessMetrics, metricsText, scrapeAllowed } from '@arbor/observability';
import { Public } from '../auth/public.decorator';
import { HttpError } from '../http/http-error';

/**
 * Prometheus' scrape target, at the origin like /health: every metric of this process (the api's,
 * and in the embedded process the projector's, worker's and webhook deliverer's too). No API key;
 * with ARBOR_METRICS_TOKEN set, the token as a bearer.
 */
@ApiExcludeController()
@Controller()
export class MetricsController {
  constructor(@Inject(ARBOR_CONFIG) private readonly config: ArborConfig) {
    collectProcessMetrics();
  }

  @Public()
  @Get('metrics')
  @Header('cache-control', 'no-store')
  async metrics(@Headers('authorization') authorization: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    if (!scrapeAllowed(authorization, this.config.metrics.token)) {
      reply.header('www-authenticate', 'Bearer');
      throw new HttpError(401, 'Unauthorized');
    }
    const { contentType, body } = await metricsText();
    reply.status(200).type(contentType).send(body);
  }
}
