import { deciderSpec } from '../testing/decider-spec';
import { envVarsDecider, MAX_ENV_VARS, MAX_ENV_VARS_BYTES } from './env-vars.decider';
import type { EnvVarsEvent } from './env-vars.events';

const now = '2026-11-24T10:00:00.000Z';
const spec = deciderSpec(envVarsDecider);
const set = (vars: Record<string, string>, replace = false) => ({ type: 'SetEnvVars' as const, owner_id: 'key-1', vars, replace, now });
const wasSet = (vars: Record<string, string>, replace = false): EnvVarsEvent => ({ type: 'EnvVarsSet', data: { owner_id: 'key-1', vars, replace, set_at: now } });
const state = (events: EnvVarsEvent[]) => events.reduce(envVarsDecider.evolve, envVarsDecider.initialState()).vars;

describe('env vars decider', () => {
  it('upserts, or with replace keeps exactly the given set', () => {
    spec.given([]).when(set({ A: '1' })).then([wasSet({ A: '1' })]);
    expect(state([wasSet({ A: '1', B: '2' }), wasSet({ B: '3', C: '4' })])).toEqual({ A: '1', B: '3', C: '4' });
    expect(state([wasSet({ A: '1', B: '2' }), wasSet({ C: '4' }, true)])).toEqual({ C: '4' });
  });

  it('keeps values with "=", quotes and spaces; refuses what /etc/environment cannot hold, naming the key', () => {
    spec.given([]).when(set({ URL: 'a=b&c="d" e' })).then([wasSet({ URL: 'a=b&c="d" e' })]);
    spec.given([]).when(set({ MULTI: 'a\nb' })).thenThrows('invalid', "env var 'MULTI' has a line break or NUL in its value, which /etc/environment cannot hold");
    spec.given([]).when(set({ '1BAD': 'x' })).thenThrows('invalid', /env var key '1BAD' must match/);
    spec.given([]).when(set({ 'A-B': 'x' })).thenThrows('invalid', /'A-B'/);
    spec.given([]).when(set({ ['K'.repeat(257)]: 'x' })).thenThrows('invalid', /longer than 256 characters/);
    spec.given([]).when(set({ BIG: 'x'.repeat(8193) })).thenThrows('invalid', "env var 'BIG' has a value longer than 8192 characters");
  });

  it(`holds at most ${MAX_ENV_VARS} variables`, () => {
    const many = Object.fromEntries(Array.from({ length: MAX_ENV_VARS }, (_, i) => [`V${i}`, 'x']));
    spec.given([wasSet(many)]).when(set({ ONE_MORE: 'x' })).thenThrows('invalid', /at most 256 env vars/);
    spec.given([wasSet(many)]).when(set({ ONE_MORE: 'x' }, true)).then([wasSet({ ONE_MORE: 'x' }, true)]);
  });

  it(`holds at most ${MAX_ENV_VARS_BYTES} bytes of KEY=VALUE lines in all`, () => {
    const big = Object.fromEntries(Array.from({ length: 31 }, (_, i) => [`V${i}`, 'x'.repeat(8192)]));
    spec.given([wasSet(big)]).when(set({ V31: 'x'.repeat(8192) })).thenThrows('invalid', /at most 262144 bytes as KEY=VALUE lines \(this would make 26\d{4}\)/);
    spec.given([wasSet(big)]).when(set({ V31: 'x'.repeat(100) })).then([wasSet({ V31: 'x'.repeat(100) })]);
  });

  it('deletes a variable that is set; any other answers "Environment variable not found"', () => {
    spec.given([wasSet({ A: '1' })]).when({ type: 'DeleteEnvVar', owner_id: 'key-1', key: 'A', now }).then([{ type: 'EnvVarDeleted', data: { owner_id: 'key-1', key: 'A', deleted_at: now } }]);
    spec.given([]).when({ type: 'DeleteEnvVar', owner_id: 'key-1', key: 'A', now }).thenThrows('not_found', 'Environment variable not found');
    spec.given([]).when({ type: 'DeleteEnvVar', owner_id: 'key-1', key: 'toString', now }).thenThrows('not_found');
  });
});
