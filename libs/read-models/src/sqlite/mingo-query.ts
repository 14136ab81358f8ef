import { Context } from 'mingo/core';
import * as queryOperators from 'mingo/operators/query';
import { Query } from 'mingo/query';
import type { Criteria } from 'mingo/types';
import type { Filter } from '../read-model-store.port';

/**
 * mingo's queries with the query operators only. The filters come from Arbor's own code: no
 * aggregation expressions ($expr), and no JavaScript ($where; scripts are off). mingo's main entry
 * registers every family of operators (aggregation, window, accumulators…), three times as much
 * code to load in every process and test file that opens the embedded store.
 */
const OPTIONS = { context: Context.init({ query: queryOperators }), scriptEnabled: false };

export function mingoQuery<T extends object>(filter: Filter): Query<T> {
  return new Query<T>(filter as Criteria<T>, OPTIONS);
}
