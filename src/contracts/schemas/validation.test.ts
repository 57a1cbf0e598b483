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

describe('errors about secrets', () => {
  const PASSWORD = 'hunter2-very-secret';
  const entry = (extra: Record<string, unknown>) => ({ task: { prompt: 'hi', secrets: [{ match: 'bank.example', fields: { password: PASSWORD }, ...extra }] } });

  it('show an entry with an unknown key with every value but its match redacted', () => {
    const e = errorOf(() => parseRequest(startSessionSchema, entry({ note: PASSWORD })));
    expect(e.details).toEqual({ parameter: 'task.secrets.0', value: { match: 'bank.example', fields: { password: '[redacted]' }, note: '[redacted]' } });
  });

  it('show too many fields or entries by their names only', () => {
    const fields = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, PASSWORD]));
    const many = errorOf(() => parseRequest(startSessionSchema, { task: { prompt: 'hi', secrets: [{ match: 'all', fields }] } }));
    expect(many.details.parameter).toBe('task.secrets.0.fields');
    expect(JSON.stringify(many.details)).not.toContain(PASSWORD);
    const entries = Array.from({ length: 51 }, () => ({ match: 'all', fields: { password: PASSWORD, seed: { totp: 'JBSWY3DPEHPK3PXP' } } }));
    const tooMany = errorOf(() => parseRequest(startSessionSchema, { task: { prompt: 'hi', secrets: entries } }));
    expect(tooMany.details.parameter).toBe('task.secrets');
    expect(JSON.stringify(tooMany.details)).not.toMatch(new RegExp(`${PASSWORD}|JBSWY3DPEHPK3PXP`));
  });
});
