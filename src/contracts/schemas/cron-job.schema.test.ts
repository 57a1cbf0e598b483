import type { CronJobRecord } from '../cron-job-record';
import { closeSchemaWorkers } from '../../agent/structured-output';
import { parseCreateCronJob, parseUpdateCronJob } from './cron-job.schema';

afterAll(() => closeSchemaWorkers());
import { errorOf } from '../../../test/support/errors';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const webhook = { name: 'hook', url: 'https://example.test/hook', submittedData: 'ai_response' };
const valid = { name: 'Invoices', prompt: 'Get the invoices', environmentId: 'env_0123456789abcdef01234567', scheduleType: 'cron', scheduleCron: '0 9 * * 1-5', timezone: 'America/New_York', webhook };

describe('POST /cron-jobs body', () => {
  it('fills the defaults of the contract', () => {
    const { fields, status } = parseCreateCronJob(valid, NOW);
    expect(status).toBe('active');
    expect(fields).toEqual({
      name: 'Invoices',
      description: '',
      environmentId: 'env_0123456789abcdef01234567',
      policyId: null,
      scheduleType: 'cron',
      scheduleAt: null,
      scheduleInterval: null,
      scheduleCron: '0 9 * * 1-5',
      timezone: 'America/New_York',
      prompt: 'Get the invoices',
      startingUrl: null,
      outputType: 'text',
      outputSchema: null,
      deliveryMode: 'webhook',
      webhook,
      retryPolicy: null,
      maxConsecutiveFailures: 5,
      maxCost: null,
      replay: false,
    });
  });

  it.each([
    [{ name: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'name is required'],
    [{ name: '  ' }, 400, 'MISSING_REQUIRED_FIELD', 'name is required'],
    [{ prompt: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'prompt is required'],
    [{ prompt: null }, 400, 'MISSING_REQUIRED_FIELD', 'prompt is required'],
    [{ environmentId: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'Valid environmentId is required'],
    [{ environmentId: 42 }, 400, 'INVALID_PARAMETER', 'Valid environmentId is required'],
    [{ environmentId: '../etc' }, 400, 'INVALID_PARAMETER', 'Valid environmentId is required'],
    [{ webhook: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'webhook config is required when deliveryMode includes webhook'],
    [{ webhook: undefined, deliveryMode: 'both' }, 400, 'MISSING_REQUIRED_FIELD', 'webhook config is required when deliveryMode includes webhook'],
    [{ scheduleType: undefined }, 400, 'MISSING_REQUIRED_FIELD', 'scheduleType is required (at, every or cron)'],
    [{ scheduleType: 'weekly' }, 400, 'INVALID_PARAMETER', 'scheduleType must be one of: at, every, cron'],
    [{ scheduleCron: '0 9 * *' }, 400, 'INVALID_PARAMETER', 'scheduleCron "0 9 * *" is not a valid cron expression: it has 4 fields; a cron expression has 5 (minute hour day-of-month month day-of-week)'],
    [{ timezone: 'Moon/Base' }, 400, 'INVALID_PARAMETER', 'timezone "Moon/Base" is not a known IANA time zone (e.g. UTC, Europe/Paris, America/New_York)'],
    [{ scheduleType: 'every', scheduleInterval: '5s' }, 400, 'INVALID_PARAMETER', 'scheduleInterval must be a whole number followed by m, h or d (minutes, hours, days), e.g. 15m, 2h, 1d'],
    [{ scheduleType: 'at', scheduleAt: '2026-11-23T09:00:00Z' }, 400, 'INVALID_PARAMETER', 'scheduleAt must be in the future (it is 2026-11-23T09:00:00.000Z, now is 2026-11-23T10:00:00.000Z)'],
    [{ webhook: { ...webhook, url: 'ftp://x' } }, 400, 'INVALID_PARAMETER', 'webhook.url: must be an http(s) URL'],
    [{ webhook: { ...webhook, submittedData: 'all' } }, 400, 'INVALID_PARAMETER', 'webhook.submittedData must be one of: ai_response, full_response, just_ping'],
    [{ outputType: 'structured' }, 400, 'MISSING_REQUIRED_FIELD', 'outputSchema is required when outputType is structured'],
    [{ maxConsecutiveFailures: 0 }, 400, 'INVALID_PARAMETER', 'maxConsecutiveFailures must be an integer between 1 and 100'],
    [{ retryPolicy: { maximumAttempts: 11 } }, 400, 'INVALID_PARAMETER', 'retryPolicy.maximumAttempts must be an integer between 1 and 10'],
    [{ deliveryMode: 'email' }, 400, 'INVALID_PARAMETER', 'deliveryMode must be one of: webhook, bot, both'],
  ])('%j → %d %s %s', (over, status, code, message) => {
    const e = errorOf(() => parseCreateCronJob({ ...valid, ...over }, NOW));
    expect({ status: e.status, code: e.code, message: e.message }).toEqual({ status, code, message });
  });

  it('reads an offset-less scheduleAt in the trigger’s time zone, and checks the zone first', () => {
    const { fields } = parseCreateCronJob({ ...valid, scheduleType: 'at', scheduleAt: '2027-01-31T09:00:00', timezone: 'Europe/Paris' }, NOW);
    expect(fields.scheduleAt?.toISOString()).toBe('2027-01-31T08:00:00.000Z');
    expect(errorOf(() => parseCreateCronJob({ ...valid, scheduleType: 'at', scheduleAt: '2027-01-31T09:00:00', timezone: 'Moon/Base' }, NOW)).details).toMatchObject({ parameter: 'timezone' });
  });

  it('takes a webhook auth of null as no auth', () => {
    expect(parseCreateCronJob({ ...valid, webhook: { ...webhook, auth: null } }, NOW).fields.webhook).toEqual(webhook);
  });

  it('gives both bounds of numeric fields', () => {
    expect(errorOf(() => parseCreateCronJob({ ...valid, maxConsecutiveFailures: 101 }, NOW)).details).toEqual({ parameter: 'maxConsecutiveFailures', value: 101, min: 1, max: 100 });
  });

  it('keeps only the field of the schedule type, and bot delivery needs no webhook', () => {
    const { fields } = parseCreateCronJob({ ...valid, webhook: undefined, deliveryMode: 'bot', scheduleType: 'every', scheduleInterval: '2h' }, NOW);
    expect(fields).toMatchObject({ scheduleType: 'every', scheduleInterval: '2h', scheduleCron: null, scheduleAt: null, deliveryMode: 'bot', webhook: null });
  });

  it('stores a structured schema as JSON text and a retry policy with its defaults', () => {
    const schema = { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { n: { type: 'number' } } };
    const { fields } = parseCreateCronJob({ ...valid, outputType: 'structured', outputSchema: schema, retryPolicy: { maximumAttempts: 2 } }, NOW);
    expect(JSON.parse(fields.outputSchema!)).toEqual(schema);
    expect(fields.retryPolicy).toEqual({ maximumAttempts: 2, initialIntervalMs: 30_000, backoffCoefficient: 2, maximumIntervalMs: 600_000 });
  });
});

describe('PUT /cron-jobs/:id body', () => {
  const current = { ...parseCreateCronJob(valid, NOW).fields, _id: 'cron_1', userId: 'usr_1', status: 'active' } as CronJobRecord;

  it('changes only what is given', () => {
    expect(parseUpdateCronJob({ prompt: 'new prompt' }, current, NOW)).toEqual({ fields: { prompt: 'new prompt' }, scheduleChanged: false, retryChanged: false, status: undefined });
  });

  it('recomputes the schedule fields when one of them changes', () => {
    const change = parseUpdateCronJob({ scheduleType: 'every', scheduleInterval: '30m' }, current, NOW);
    expect(change.scheduleChanged).toBe(true);
    expect(change.fields).toEqual({ scheduleType: 'every', scheduleAt: null, scheduleInterval: '30m', scheduleCron: null, timezone: 'America/New_York' });
    expect(parseUpdateCronJob({ timezone: 'Europe/Paris' }, current, NOW).fields).toMatchObject({ scheduleCron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
  });

  it('checks the result of the change, with the same messages', () => {
    expect(errorOf(() => parseUpdateCronJob({ scheduleType: 'at' }, current, NOW)).message).toBe('scheduleAt is required when scheduleType is at');
    expect(errorOf(() => parseUpdateCronJob({ webhook: null }, current, NOW)).message).toBe('webhook config is required when deliveryMode includes webhook');
    expect(errorOf(() => parseUpdateCronJob({ name: '' }, current, NOW)).message).toBe('name is required');
    expect(errorOf(() => parseUpdateCronJob({ environmentId: '' }, current, NOW)).message).toBe('Valid environmentId is required');
    expect(parseUpdateCronJob({ deliveryMode: 'bot', webhook: null }, current, NOW).fields).toEqual({ deliveryMode: 'bot', webhook: null });
  });

  it('passes a status change on', () => {
    expect(parseUpdateCronJob({ status: 'paused' }, current, NOW)).toMatchObject({ fields: {}, status: 'paused' });
  });
});

describe('structured outputSchema of a trigger', () => {
  it('is refused over 64 KB while parsing, without echoing the schema', () => {
    const e = errorOf(() => parseCreateCronJob({ ...valid, outputType: 'structured', outputSchema: { type: 'string', description: 'x'.repeat(70_000) } }, NOW));
    expect({ status: e.status, code: e.code, message: e.message, details: e.details }).toEqual({ status: 400, code: 'INVALID_PARAMETER', message: 'outputSchema is larger than 64 KB (70034 bytes serialized)', details: { parameter: 'outputSchema', value: null } });
  });
});
