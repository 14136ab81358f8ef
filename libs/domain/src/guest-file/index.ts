export * from './guest-file.events';
export * from './guest-file.decider';
export * from './file-chunks';
