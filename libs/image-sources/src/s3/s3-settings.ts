/** Where S3 sources are fetched from (README: Configuration, ARBOR_S3_*). */
export interface S3Settings {
  /** An S3-compatible endpoint (`https://s3.example.com`, `http://127.0.0.1:9000`); null: AWS's own, by region. */
  endpoint: string | null;
  region: string;
  /** Null: the SDK's default chain (environment, shared files, instance roles). */
  accessKeyId: string | null;
  secretAccessKey: string | null;
  /** `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key` (most S3-compatible servers want it). */
  forcePathStyle: boolean;
}
