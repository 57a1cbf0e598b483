import { parseRunTask, startSessionSchema } from './session.schema';
import { newTaskMessageSchema } from './message.schema';
import { TASK_PROXY_REFUSAL } from './task.schema';
import { parseRequest } from './validation';
import { errorOf } from '../../../test/support/errors';

const startSession = (body: unknown) => parseRequest(startSessionSchema, body);
const newTask = (message: Record<string, unknown>) => parseRequest(newTaskMessageSchema, { actionType: 'newTask', newState: 'start', ...message }, 'message.');
const wire = (e: any) => ({ status: e.status, code: e.code, message: e.message, details: e.details });
const proxy = { source: 'custom', type: 'http', host: 'proxy.example.net', port: '3128', username: 'me', password: 'hunter2' };

describe('POST /start/run-task body', () => {
  it('takes a task alone, as before', () => {
    const body = parseRunTask({ task: { prompt: 'hi', files: ['file_a'] }, environmentId: 'env_1' });
    expect(body).toMatchObject({ environmentId: 'env_1', profileId: null, policyId: null, proxy: null, mode: 'default', reachOutMode: 'guardrail_only' });
    expect(body.task).toMatchObject({ prompt: 'hi', files: ['file_a'], maxDuration: 300000 });
    expect(body).not.toHaveProperty('files');
  });

  it('takes top-level files (where the upload section of the contract puts them) into the task', () => {
    expect(parseRunTask({ task: { prompt: 'hi' }, files: ['file_a', 'file_b'] }).task.files).toEqual(['file_a', 'file_b']);
  });

  it('merges top-level files with task.files without duplicates, task.files first', () => {
    expect(parseRunTask({ task: { prompt: 'hi', files: ['file_a', 'file_b'] }, files: ['file_b', 'file_c'] }).task.files).toEqual(['file_a', 'file_b', 'file_c']);
    expect(parseRunTask({ task: { prompt: 'hi', files: ['file_a'] }, files: ['file_a'] }).task.files).toEqual(['file_a']);
    expect(parseRunTask({ task: { prompt: 'hi', files: ['file_a'] }, files: [] }).task.files).toEqual(['file_a']);
    expect(parseRunTask({ task: { prompt: 'hi', files: ['file_a'] }, files: null }).task.files).toEqual(['file_a']);
  });

  it('checks top-level files as task.files are checked', () => {
    expect(wire(errorOf(() => parseRunTask({ task: { prompt: 'hi' }, files: 'file_a' })))).toEqual({
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'files must be an array',
      details: { parameter: 'files', value: 'file_a' },
    });
    expect(errorOf(() => parseRunTask({ task: { prompt: 'hi' }, files: [''] }))).toMatchObject({ status: 400, details: { field: 'files.0' } });
    expect(errorOf(() => parseRunTask({ task: { prompt: 'hi' }, files: [42] }))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'files.0', value: 42 } });
    const many = Array.from({ length: 21 }, (_, i) => `file_${i}`);
    expect(errorOf(() => parseRunTask({ task: { prompt: 'hi' }, files: many }))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'files', max: 20 } });
    expect(errorOf(() => parseRunTask({ task: { prompt: 'hi', files: many } }))).toMatchObject({ status: 400, code: 'INVALID_PARAMETER', details: { parameter: 'task.files', max: 20 } });
  });

  it('holds the merged list to the limit of task.files', () => {
    const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => `file_${from + i}`);
    expect(parseRunTask({ task: { prompt: 'hi', files: ids(0, 15) }, files: ids(5, 15) }).task.files).toEqual(ids(0, 20));
    expect(wire(errorOf(() => parseRunTask({ task: { prompt: 'hi', files: ids(0, 15) }, files: ids(10, 15) })))).toEqual({
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'files and task.files together may hold at most 20 fileIds (got 25 different ones)',
      details: { parameter: 'files', value: 25, max: 20 },
    });
  });

  it('still names task.prompt when there is no task', () => {
    for (const body of [{}, { task: null }, { files: ['file_a'] }]) {
      expect(wire(errorOf(() => parseRunTask(body)))).toEqual({ status: 400, code: 'MISSING_REQUIRED_FIELD', message: 'task.prompt is required', details: { field: 'task.prompt' } });
    }
  });
});

describe('a proxy inside the task', () => {
  it('is refused on start-session and run-task, naming task.proxy and without echoing it', () => {
    const expected = { status: 400, code: 'INVALID_PARAMETER', message: `task.proxy: ${TASK_PROXY_REFUSAL}`, details: { parameter: 'task.proxy', value: null } };
    expect(wire(errorOf(() => startSession({ task: { prompt: 'hi', proxy } })))).toEqual(expected);
    expect(wire(errorOf(() => parseRunTask({ task: { prompt: 'hi', proxy } })))).toEqual(expected);
    expect(wire(errorOf(() => parseRunTask({ proxy, task: { prompt: 'hi', proxy } })))).toEqual(expected);
    expect(wire(errorOf(() => startSession({ task: { prompt: 'hi', proxy: null } })))).toEqual(expected);
    expect(TASK_PROXY_REFUSAL).toMatch(/proxy is a session-level field/);
    expect(JSON.stringify(errorOf(() => startSession({ task: { prompt: 'hi', proxy } })).details)).not.toContain('hunter2');
  });

  it('is refused in a newTask message, naming message.proxy', () => {
    expect(wire(errorOf(() => newTask({ prompt: 'hi', proxy })))).toEqual({ status: 400, code: 'INVALID_PARAMETER', message: `message.proxy: ${TASK_PROXY_REFUSAL}`, details: { parameter: 'message.proxy', value: null } });
  });

  it('wins over the other problems of the task', () => {
    expect(errorOf(() => startSession({ task: { prompt: 'hi', maxDuration: 5, proxy } })).details).toEqual({ parameter: 'task.proxy', value: null });
  });

  it('is taken at the top level of the session', () => {
    expect(startSession({ proxy, task: { prompt: 'hi' } }).proxy).toEqual({ ...proxy });
    expect(parseRunTask({ proxy, task: { prompt: 'hi' } }).proxy).toMatchObject({ source: 'custom', host: 'proxy.example.net' });
  });
});

describe('empty ids of start-session', () => {
  it.each(['environmentId', 'profileId', 'policyId'])('%s "" is refused as policyId "" is', (field) => {
    expect(wire(errorOf(() => startSession({ [field]: '' })))).toEqual({ status: 400, code: 'MISSING_REQUIRED_FIELD', message: `${field} must not be empty`, details: { field } });
    expect(wire(errorOf(() => parseRunTask({ [field]: '', task: { prompt: 'hi' } })))).toEqual({ status: 400, code: 'MISSING_REQUIRED_FIELD', message: `${field} must not be empty`, details: { field } });
  });

  it('takes a given id and null as none', () => {
    expect(startSession({ environmentId: 'env_1' })).toMatchObject({ environmentId: 'env_1', profileId: null });
    expect(startSession({ environmentId: null, profileId: null, policyId: null })).toMatchObject({ environmentId: null, profileId: null, policyId: null });
  });
});

describe('null on an optional field', () => {
  it('is the default on start-session, both for the session and its task', () => {
    const body = startSession({ task: null, environmentId: null, profileId: null, policyId: null, proxy: null, mode: null, reachOutMode: null });
    expect(body).toEqual({ task: undefined, environmentId: null, profileId: null, policyId: null, proxy: null, mode: 'default', reachOutMode: 'guardrail_only' });
  });

  it('is the default for every task parameter, with no null key left', () => {
    const nulls = { prompt: null, startingUrl: null, maxDuration: null, maxInputTokens: null, maxOutputTokens: null, terminateOnCompletion: null, outputType: null, outputSchema: null, secrets: null, files: null, webhook: null, replayOf: null };
    const defaults = { prompt: '', startingUrl: null, maxDuration: 300000, maxInputTokens: 100000, maxOutputTokens: 100000, terminateOnCompletion: false, outputType: 'text', secrets: [], files: [] };
    expect(startSession({ task: { ...nulls, prompt: 'hi' } }).task).toEqual({ ...defaults, prompt: 'hi' });
    expect(parseRunTask({ task: { ...nulls, prompt: 'hi' }, files: null }).task).toEqual({ ...defaults, prompt: 'hi' });
    expect(newTask({ ...nulls, prompt: 'hi' })).toEqual({ actionType: 'newTask', newState: 'start', ...defaults, prompt: 'hi' });
  });

  it('is the default inside a webhook and a proxy', () => {
    const webhook = { name: 'hook', url: 'https://example.com/hook', submittedData: 'just_ping', auth: null };
    expect(startSession({ task: { prompt: 'hi', webhook } }).task!.webhook).toEqual({ name: 'hook', url: 'https://example.com/hook', submittedData: 'just_ping' });
    expect(startSession({ proxy: { ...proxy, username: null, password: null, level: null } }).proxy).toMatchObject({ source: 'custom', host: 'proxy.example.net' });
    expect(startSession({ proxy: { source: 'Service', country: 'DE', level: null } }).proxy).toMatchObject({ source: 'Service', country: 'DE' });
  });

  it('keeps the checks that depend on the field', () => {
    // a structured output still needs its schema
    expect(errorOf(() => startSession({ task: { prompt: 'hi', outputType: 'structured_csv', outputSchema: null } }))).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'task.outputSchema' } });
  });

  it('on a required field is still MISSING_REQUIRED_FIELD', () => {
    expect(wire(errorOf(() => startSession({ task: { prompt: 'hi', secrets: [{ match: null, fields: { a: 'b' } }] } })))).toEqual({
      status: 400,
      code: 'MISSING_REQUIRED_FIELD',
      message: 'task.secrets.0.match is required',
      details: { field: 'task.secrets.0.match' },
    });
    expect(errorOf(() => startSession({ task: { prompt: 'hi', webhook: { name: 'hook', url: null, submittedData: 'just_ping' } } }))).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'task.webhook.url' } });
    expect(errorOf(() => startSession({ proxy: { source: 'custom', type: 'http', host: null, port: '3128' } }))).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'proxy.host' } });
    expect(errorOf(() => newTask({ prompt: 'hi', actionType: undefined }))).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'message.actionType' } });
    // a required value of a list of literals given null: not one of them
    expect(errorOf(() => newTask({ prompt: 'hi', newState: null }))).toMatchObject({ code: 'INVALID_PARAMETER', message: 'message.newState must be one of: start' });
  });

  it('in a list is a wrong value (INVALID_PARAMETER), not a missing field', () => {
    expect(wire(errorOf(() => startSession({ task: { prompt: 'hi', files: [null] } })))).toEqual({
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'task.files.0 must be a string',
      details: { parameter: 'task.files.0', value: null },
    });
    expect(errorOf(() => startSession({ task: { prompt: 'hi', secrets: [null] } }))).toMatchObject({ code: 'INVALID_PARAMETER', message: 'task.secrets.0 must be an object' });
    expect(errorOf(() => startSession({ task: { prompt: 'hi', secrets: [{ match: 'all', fields: { password: null } }] } }))).toMatchObject({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'task.secrets.0.fields.password', value: '[redacted]' },
    });
  });

  it('does not hide a wrong value', () => {
    expect(errorOf(() => startSession({ task: { prompt: 'hi', maxDuration: '300000' } }))).toMatchObject({ code: 'INVALID_PARAMETER', message: 'task.maxDuration must be a number' });
    expect(errorOf(() => startSession({ task: 'hi' }))).toMatchObject({ code: 'INVALID_PARAMETER', message: 'task must be an object' });
  });
});
