export * from './http/error-response.dto';
export * from './http/vm.dto';
export * from './http/system.dto';
export * from './http/event-feed.dto';
export * from './http/is-string-map.validator';
export * from './http/commits.dto';
export * from './http/tags.dto';
