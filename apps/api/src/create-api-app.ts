import { type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { maxHeaderSize } from 'node:http';
import { parse as parseQueryString } from 'node:querystring';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Infrastructure } from '@arbor/application';
import { EVENT_CATALOGUE } from '@arbor/domain';
import { type Log, silentLog } from '@arbor/observability';
import { ApiModule } from './api.module';
import { answerError } from './http/error.filter';
import { jsonBodyParser } from './http/json-body';
import { NestLog } from './http/nest-log';
import { proxyTrust } from './http/proxy-trust';
import { refuseOversizeBodies } from './http/oversize-body';
import { answerClientError } from './http/oversize-head';
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
  const app = await NestFactory.create<NestFastifyApplication>(
    ApiModule.register(infra),
    new FastifyAdapter({
      // Whose X-Forwarded-For names the client (rate limits, sign-in mail): none unless ARBOR_TRUST_PROXY says.
      trustProxy: proxyTrust(infra.config.trustProxy),
      // A request's whole arrival, body included: an image upload of gigabytes needs more than Node's 5 minutes.
      requestTimeout: infra.config.images.uploadTimeoutMs,
      // Paths match as they did on Express: any letter case, a trailing slash or not, and a path
      // parameter as long as the request line allows (Fastify's default cuts at 100 characters).
      // Query strings: repeated keys become arrays and nothing nests, as Node's own parser (Express's) does it.
      routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: maxHeaderSize, querystringParser: (query) => parseQueryString(query) },
      // A request line and headers over Node's limit get the error envelope (431), not Fastify's own body;
      // so does what Fastify refuses before routing (a path with a broken %-escape: 400).
      clientErrorHandler: answerClientError,
      frameworkErrors: (error: Error, _request: FastifyRequest, reply: FastifyReply) => answerError(reply, error),
      // Nest's middleware layer (middie) is not used: the hooks below run on every request.
      skipMiddie: true,
    }),
    { logger: new NestLog(log), bodyParser: false },
  );
  const fastify = app.getHttpAdapter().getInstance();
  const observer = requestObserver(log);
  fastify.addHook('onRequest', observer.begin);
  // A body declared over the limit is answered 413 at once and drained (bounded), never parsed. A
  // multipart body (an image upload) has its own cap, which its handler applies as it streams.
  const refuseOversize = refuseOversizeBodies(JSON_BODY_LIMIT);
  fastify.addHook('onRequest', (request, _reply, done) => (isMultipart(request.headers['content-type']) ? done() : refuseOversize(request.raw, done)));
  // Parse JSON whatever the content type says: several SDKs send bodies without one. Bodies
  // nested deeper than any request of the contract are refused before they are parsed. A
  // multipart body (an image upload) is left unread: its handler streams it to disk.
  const parseJson = jsonBodyParser(JSON_BODY_LIMIT);
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', (request, _payload, done) => (isMultipart(request.headers['content-type']) ? done(null, undefined) : parseJson(request.raw, done)));
  app.useGlobalPipes(new EdgeValidationPipe());

  // The OpenAPI document is built on its first request (then kept): scanning every controller
  // costs about 150 ms, which every start would pay for a page few ever open.
  SwaggerModule.setup('api/docs', app, () => apiDocument(app), { jsonDocumentUrl: 'api/docs-json' });
  return app;
}

/** The API's OpenAPI document, with the event catalogue's schemas (JSON Schema, which OpenAPI 3.1 speaks): the data of each event type. */
function apiDocument(app: INestApplication): OpenAPIObject {
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
  for (const [type, entry] of Object.entries(EVENT_CATALOGUE)) document.components!.schemas![`${type}EventData`] = entry.schema as object;
  return document;
}
