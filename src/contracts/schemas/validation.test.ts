import { startSessionSchema } from './session.schema';
import { newTaskMessageSchema } from './message.schema';
import { parseRequest } from './validation';
import { errorOf } from '../../../test/support/errors';

describe('request validation', () => {
  it('fills task defaults from the contract', () => {
    const body = parseRequest(startSessionSchema, { task: { prompt: 'hi' } });
    expect(body.task).toMatchObject({ prompt: 'hi', startingUrl: null, maxDuration: 300000, maxInputTokens: 100000, maxOutputTokens: 100000, terminateOnCompletion: false, outputType: 'text', files: [], secrets: [] });
    expect(body).toMatchObject({ environmentId: null, mode: 'default', reachOutMode: 'guardrail_only' });
  });

  it.each([
    ['maxDuration', 999, 1000, 300000],
    ['maxDuration', 300001, 1000, 300000],
    ['maxInputTokens', 999, 1000, 100000],
    ['maxOutputTokens', 99, 100, 100000],
    ['maxOutputTokens', 100001, 100, 100000],
  ])('rejects %s=%d with INVALID_PARAMETER and both bounds', (field, value, min, max) => {
    const e = errorOf(() => parseRequest(startSessionSchema, { task: { [field]: value } }));
    expect(e.code).toBe('INVALID_PARAMETER');
    expect(e.status).toBe(400);
    expect(e.details).toEqual({ parameter: `task.${field}`, value, min, max });
  });

  it('names missing fields and enum values', () => {
    const missing = errorOf(() => parseRequest(newTaskMessageSchema, { actionType: 'newTask' }, 'message.'));
    expect(missing.code).toBe('MISSING_REQUIRED_FIELD');
    expect(missing.details).toEqual({ field: 'message.newState' });
    const reach = errorOf(() => parseRequest(startSessionSchema, { reachOutMode: 'x' }));
    expect(reach.message).toBe('reachOutMode must be one of: off, guardrail_only, full');
  });

  it('requires an output schema for structured output', () => {
    const e = errorOf(() => parseRequest(startSessionSchema, { task: { outputType: 'structured_csv' } }));
    expect(e.code).toBe('INVALID_PARAMETER');
    expect(e.details.parameter).toBe('task.outputSchema');
    expect(() => parseRequest(startSessionSchema, { task: { outputType: 'structured_csv', outputSchema: ['a', 'b'] } })).not.toThrow();
  });
});
