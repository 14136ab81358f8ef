export * from './write-file-atomic';
export * from './read-json-file';
export * from './durable-rename';
