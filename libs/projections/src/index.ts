/**
 * The read models' projections and what applies the log to them: the live Projector (the
 * projector app runs it), replays into a store (rebuilds, and the api's time travel into
 * throwaway stores). Shared by every app that builds read models, so none reaches into another.
 */
export { ALL_PROJECTIONS } from './projections';
export { projectionOf, type Projection, type ProjectionReads } from './projections/projection';
export { EVENT_STATS_COLLECTION } from './projections/event-stats.projection';
export { Projector } from './projector';
export { BatchedUnits } from './batched-units';
export { replayLog, type ReplayRange } from './replay-log';
export { rebuildReadModels } from './rebuild-read-models';
