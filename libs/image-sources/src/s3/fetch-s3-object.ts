import type { S3ServiceException } from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { writeBodyToFile } from '../download/write-body-to-file';
import { ArchiveTooLargeError } from '../tar/unsafe-archive-error';
import type { S3Settings } from './s3-settings';

export interface S3FetchOptions {
  maxBytes: number;
  onBytes?: (bytes: number, total: number | null) => void;
}

/**
 * Streams `s3://bucket/key` into `file` with the AWS SDK's S3 client (the reference client: SigV4,
 * path-style addressing, retries, every S3-compatible server). Checksums are computed and checked
 * only where S3 requires them: S3-compatible servers often do not speak the SDK's newer defaults.
 */
export async function fetchS3Object(settings: S3Settings, bucket: string, key: string, file: string, options: S3FetchOptions): Promise<{ bytes: number }> {
  // Loaded when an S3 image is fetched, not when the library is: every Arbor process imports this
  // library (settings, references), and the SDK costs the api several MiB of heap it never uses.
  const { GetObjectCommand, S3Client, S3ServiceException } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.accessKeyId && settings.secretAccessKey ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
  });
  const what = `s3://${bucket}/${key}`;
  try {
    const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const total = object.ContentLength ?? null;
    if (total !== null && total > options.maxBytes) throw new ArchiveTooLargeError(`${what} is ${Math.round(total / 1048576)} MiB, more than the limit of ${Math.round(options.maxBytes / 1048576)} MiB`);
    if (!object.Body) throw new Error(`${what}: S3 sent no content`);
    const { bytes } = await writeBodyToFile(object.Body as Readable, file, { maxBytes: options.maxBytes, onBytes: (done) => options.onBytes?.(done, total), what });
    if (total !== null && bytes !== total) throw new Error(`${what}: S3 announced ${total} bytes and sent ${bytes}`);
    return { bytes };
  } catch (error) {
    throw describeS3Error(error, what, S3ServiceException);
  } finally {
    client.destroy();
  }
}

/** What a user can act on: a missing bucket or key, refused credentials; the rest as S3 said it. */
function describeS3Error(error: unknown, what: string, ServiceException: typeof S3ServiceException): Error {
  if (!(error instanceof ServiceException)) {
    const message = (error as Error)?.message ?? String(error);
    if (error instanceof ArchiveTooLargeError || message.startsWith(what)) return error as Error;
    return new Error(`${what}: ${message}`);
  }
  switch (error.name) {
    case 'NoSuchKey':
    case 'NotFound':
      return new Error(`${what} not found`);
    case 'NoSuchBucket':
      return new Error(`${what}: bucket ${what.split('/')[2]} not found`);
    case 'AccessDenied':
    case 'InvalidAccessKeyId':
    case 'SignatureDoesNotMatch':
      return new Error(`${what}: S3 refused access (${error.name}); check ARBOR_S3_ACCESS_KEY_ID and ARBOR_S3_SECRET_ACCESS_KEY`);
    default:
      return new Error(`${what}: ${error.name}: ${error.message}`);
  }
}
