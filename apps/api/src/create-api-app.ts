import { type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { Infrastructure } from '@arbor/application';
import { EVENT_CATALOGUE } from '@arbor/domain';
import { type Log, silentLog } from '@arbor/observability';
import { ApiModule } from './api.module';
import { refuseDeepJson } from './http/json-nesting';
import { NestLog } from './http/nest-log';
import { refuseOversizeBodies } from './http/oversize-body';
import { answerOversizeHeads } from './http/oversize-head';
import { requestObserver } from './http/request-observer';
import { readBuildInfo } from './system/build-info';
import { EdgeValidationPipe } from './http/validation.pipe';

/** Largest JSON body accepted, 16 MiB (file uploads of later issues set their own limit). */
export const JSON_BODY_LIMIT = 16 * 1024 * 1024;

const isMultipart = (type: string | string[] | undefined): boolean => typeof type === 'string' && /^multipart\/form-data\b/i.test(type);

/**
 * Builds the HTTP app on opened stores: validation, errors, OpenAPI at /api/docs, /metrics; every
 * request logged (one line once answered) and measured. The secrets key is loaded (made on first
 * start) and checked against the key store first: an api given another key than its peers fails
 * to start rather than seal what they cannot open.
 */
export async function createApiApp(infra: Infrastructure, options: { log?: Log } = {}): Promise<INestApplication> {
  await infra.secrets.secretsKey();
  const log = options.log ?? silentLog;
  const app = await NestFactory.create<NestExpressApplication>(ApiModule.register(infra), {
    logger: new NestLog(log),
    bodyParser: false,
  });
  const observer = requestObserver(log);
  app.use(observer.begin);
  // A body declared over the limit is answered 413 at once and drained (bounded), never parsed. A
  // multipart body (an image upload) has its own cap, which its handler applies as it streams.
  const refuseOversize = refuseOversizeBodies(JSON_BODY_LIMIT);
  app.use((request: Request, response: Response, next: NextFunction) => (isMultipart(request.headers['content-type']) ? next() : refuseOversize(request, response, next)));
  // Parse JSON whatever the content type says: several SDKs send bodies without one. Bodies
  // nested deeper than any request of the contract are refused before they are parsed.
  // (Nest's type leaves `verify` out, reserved for `rawBody: true`, which Arbor does not use; it passes it on.)
  // A multipart body (an image upload) is left unread: its handler streams it to disk.
  const jsonOptions = { limit: JSON_BODY_LIMIT, type: (request: { headers: Record<string, string | string[] | undefined> }) => !isMultipart(request.headers['content-type']), verify: refuseDeepJson };
  app.useBodyParser('json', jsonOptions);
  app.use(observer.resume);
  app.useGlobalPipes(new EdgeValidationPipe());
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  // Whose X-Forwarded-For names the client (rate limits, sign-in mail): none unless ARBOR_TRUST_PROXY says.
  app.getHttpAdapter().getInstance().set('trust proxy', infra.config.trustProxy);
  answerOversizeHeads(app.getHttpServer());
  // A request's whole arrival, body included: an image upload of gigabytes needs more than Node's 5 minutes.
  (app.getHttpServer() as import('node:http').Server).requestTimeout = infra.config.images.uploadTimeoutMs;

  const build = readBuildInfo();
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Arbor (Vers API)')
      .setDescription('Branchable virtual machines: the Vers REST API, served by an event-sourced control plane.')
      .setVersion(build.version)
      .addBearerAuth()
      .setOpenAPIVersion('3.1.0')
      .build(),
  );
  // The event catalogue's schemas (JSON Schema, which OpenAPI 3.1 speaks): the data of each event type.
  for (const [type, entry] of Object.entries(EVENT_CATALOGUE)) document.components!.schemas![`${type}EventData`] = entry.schema as object;
  SwaggerModule.setup('api/docs', app, document, { jsonDocumentUrl: 'api/docs-json' });
  return app;
}
