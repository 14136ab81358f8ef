import { join } from 'node:path';
import type { S3Settings } from '@arbor/image-sources';
import { booleanSetting, positiveSetting } from './settings';

const MIB = 1024 * 1024;

/** How base images are made (README: Configuration, ARBOR_IMAGE_*, ARBOR_REGISTRY_*, ARBOR_S3_*). */
export interface ImageSettings {
  /**
   * Where the api keeps uploads, unpacked, until their job ends, and where workers read them: with
   * the api and workers on different hosts, a directory they share (ARBOR_IMAGE_UPLOAD_DIR).
   */
  uploadDir: string;
  /** The largest archive taken: an upload's body, an S3 object, an image's layers together (ARBOR_IMAGE_ARCHIVE_MAX_MIB). */
  archiveMaxBytes: number;
  /** The most an unpacked root filesystem may hold (ARBOR_IMAGE_ROOTFS_MAX_MIB), and its entries. */
  rootfsMaxBytes: number;
  rootfsMaxEntries: number;
  /** Registries (host[:port]) spoken to over plain HTTP, e.g. an in-house or test registry (ARBOR_REGISTRY_INSECURE). */
  insecureRegistries: string[];
  /**
   * Registries a tenant's image_ref may name though they resolve to private addresses (the host,
   * its network): the insecure ones and these (ARBOR_REGISTRY_PRIVATE). Any other private
   * destination is refused, as for webhooks.
   */
  privateRegistries: string[];
  s3: S3Settings;
  /** Image jobs one worker runs at once (ARBOR_IMAGE_BUILDS); more wait their turn. */
  parallelBuilds: number;
  /** How often a job interrupted by worker restarts is started again before it fails (ARBOR_IMAGE_BUILD_ATTEMPTS). */
  buildAttempts: number;
  /**
   * How long one request may take to arrive, body included (ARBOR_IMAGE_UPLOAD_TIMEOUT_MS): the
   * api's HTTP server's request timeout, long enough for a large upload (Node's default is 5 min).
   */
  uploadTimeoutMs: number;
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);

export function loadImageSettings(env: NodeJS.ProcessEnv, dataDir: string): ImageSettings {
  const endpoint = env.ARBOR_S3_ENDPOINT?.trim() || null;
  if (endpoint !== null && !/^https?:\/\//.test(endpoint)) throw new Error(`ARBOR_S3_ENDPOINT must be an http(s) URL (got "${endpoint}")`);
  const insecureRegistries = list(env.ARBOR_REGISTRY_INSECURE);
  return {
    uploadDir: env.ARBOR_IMAGE_UPLOAD_DIR?.trim() || join(dataDir, 'images', 'uploads'),
    archiveMaxBytes: positiveSetting(env, 'ARBOR_IMAGE_ARCHIVE_MAX_MIB', 8192) * MIB,
    rootfsMaxBytes: positiveSetting(env, 'ARBOR_IMAGE_ROOTFS_MAX_MIB', 32768) * MIB,
    rootfsMaxEntries: positiveSetting(env, 'ARBOR_IMAGE_ROOTFS_MAX_ENTRIES', 2_000_000),
    insecureRegistries,
    privateRegistries: [...insecureRegistries, ...list(env.ARBOR_REGISTRY_PRIVATE)],
    s3: {
      endpoint,
      region: env.ARBOR_S3_REGION?.trim() || 'us-east-1',
      accessKeyId: env.ARBOR_S3_ACCESS_KEY_ID?.trim() || null,
      secretAccessKey: env.ARBOR_S3_SECRET_ACCESS_KEY?.trim() || null,
      forcePathStyle: booleanSetting(env, 'ARBOR_S3_FORCE_PATH_STYLE', endpoint !== null),
    },
    parallelBuilds: positiveSetting(env, 'ARBOR_IMAGE_BUILDS', 2),
    buildAttempts: positiveSetting(env, 'ARBOR_IMAGE_BUILD_ATTEMPTS', 3),
    uploadTimeoutMs: positiveSetting(env, 'ARBOR_IMAGE_UPLOAD_TIMEOUT_MS', 3_600_000),
  };
}

const UPLOAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function checkUploadId(upload_id: string): void {
  if (!UPLOAD_ID.test(upload_id)) throw new Error(`upload id ${upload_id} is not a UUID`);
}

/**
 * Where an upload waits for its job, unpacked: `<upload dir>/<upload id>.upload/`, holding
 * `rootfs/` (the root filesystem, as the safe extractor wrote it) and `unpacked.json` (what the
 * extraction reported, or why it failed: the job then fails saying so). The api unpacks the
 * upload as it arrives into `<upload id>.upload.part-<random>/` and renames it once complete (one
 * syncfs before the job is asked for); the worker builds from `rootfs/` and deletes the whole
 * directory when the job ends.
 */
export function uploadTreeOf(uploadDir: string, upload_id: string): string {
  checkUploadId(upload_id);
  return join(uploadDir, `${upload_id}.upload`);
}

/** `unpacked.json` of an upload's directory: the extraction's report, or why it failed. */
export type UnpackedUpload = { entries: number; bytes: number; skipped_devices: number; skipped_xattrs: number } | { error: string };

/**
 * Where an uploaded tarball waited for its job before uploads were unpacked as they arrived:
 * `<upload dir>/<upload id>.tar`. Jobs asked for by an earlier version still build from it.
 */
export function uploadFileOf(uploadDir: string, upload_id: string): string {
  checkUploadId(upload_id);
  return join(uploadDir, `${upload_id}.tar`);
}
