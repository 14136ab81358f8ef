/** Where turning a source into a root filesystem stands: `done` of `total` bytes downloaded, or layers unpacked. */
export interface SourceProgressReport {
  stage: 'downloading' | 'extracting';
  done: number;
  total: number | null;
  unit: 'bytes' | 'layers';
}

export type SourceProgress = (report: SourceProgressReport) => void;
