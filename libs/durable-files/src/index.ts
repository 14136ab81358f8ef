export * from './write-file-atomic';
export * from './read-json-file';
