import { closeSchemaWorkers } from '../agent/structured-output';
import { parseCreateCronJob } from '../contracts/schemas/cron-job.schema';
import { taskParamsSchema } from '../contracts/schemas/task.schema';
import { checkTask, checkTriggerTask, TASK_PLACES, triggerTaskParams } from './task-checks';

afterAll(() => closeSchemaWorkers());

const task = (over: Record<string, unknown>) => taskParamsSchema.parse({ prompt: 'Find the price', ...over });
const refusal = (p: Promise<unknown>) => p.then(() => null, (err: { status: number; code: string; message: string; details: unknown }) => ({ status: err.status, code: err.code, message: err.message, details: err.details }));
/** A JSON Schema the task schema takes but the service cannot enforce: it does not compile. */
const UNCOMPILABLE = { type: 'object', required: 'a' };

describe('the task checks', () => {
  it('refuse an empty or blank prompt with INVALID_TASK_DETAILS wherever the door carries it', async () => {
    const expected = {
      session: { message: 'task.prompt must not be empty', details: { field: 'task.prompt' } },
      message: { message: 'message.prompt must not be empty', details: { field: 'message.prompt' } },
      tool: { message: 'prompt must not be empty', details: { field: 'prompt' } },
      chat: { message: 'messages: the user message (the task) must not be empty', details: { field: 'messages' } },
      trigger: { message: 'prompt is required', details: { field: 'prompt' } },
    };
    for (const [door, place] of Object.entries(TASK_PLACES)) {
      for (const prompt of ['', ' \n\t ']) {
        expect({ door, ...(await refusal(checkTask(task({ prompt }), place))) }).toEqual({ door, status: 400, code: 'INVALID_TASK_DETAILS', ...expected[door as keyof typeof expected] });
      }
    }
  });

  it('take a replay without a prompt (it takes the replayed task\'s)', async () => {
    await expect(checkTask(task({ prompt: '', replayOf: 'task_1' }), TASK_PLACES.session)).resolves.toBeUndefined();
  });

  it('refuse an output schema that cannot be enforced with INVALID_PARAMETER, without echoing it', async () => {
    for (const [place, parameter] of [[TASK_PLACES.session, 'task.outputSchema'], [TASK_PLACES.message, 'message.outputSchema'], [TASK_PLACES.tool, 'outputSchema']] as const) {
      expect(await refusal(checkTask(task({ outputType: 'structured_json', outputSchema: UNCOMPILABLE }), place))).toEqual({
        status: 400,
        code: 'INVALID_PARAMETER',
        message: 'outputSchema is not a valid JSON Schema: outputSchema.required must be array',
        details: { parameter, value: null },
      });
    }
    await expect(checkTask(task({ outputType: 'structured_json', outputSchema: { type: 'object', properties: { price: { type: 'number' } } } }), TASK_PLACES.tool)).resolves.toBeUndefined();
    await expect(checkTask(task({ outputType: 'structured_csv', outputSchema: ['name', 'price'] }), TASK_PLACES.tool)).resolves.toBeUndefined();
  });

  it('check the prompt before the output schema', async () => {
    expect(await refusal(checkTask(task({ prompt: ' ', outputType: 'structured_json', outputSchema: UNCOMPILABLE }), TASK_PLACES.tool))).toMatchObject({ code: 'INVALID_TASK_DETAILS' });
  });
});

describe("a trigger's task", () => {
  const NOW = Date.parse('2026-11-23T10:00:00Z');
  const valid = { name: 'Invoices', prompt: 'Get the invoices', environmentId: 'env_0123456789abcdef01234567', scheduleType: 'every', scheduleInterval: '1d', deliveryMode: 'bot' };
  const created = (over: Record<string, unknown>) => parseCreateCronJob({ ...valid, ...over }, NOW).fields;

  it('is checked as the task its runs perform: a blank prompt, a schema that cannot be enforced', async () => {
    expect(await refusal(checkTriggerTask(created({ prompt: '   ' })))).toEqual({ status: 400, code: 'INVALID_TASK_DETAILS', message: 'prompt is required', details: { field: 'prompt' } });
    expect(await refusal(checkTriggerTask(created({ outputType: 'structured', outputSchema: { type: 'date' } })))).toEqual({
      status: 400,
      code: 'INVALID_PARAMETER',
      message: 'outputSchema is not a valid JSON Schema: outputSchema.type must be equal to one of the allowed values',
      details: { parameter: 'outputSchema', value: null },
    });
    expect(await refusal(checkTriggerTask(created({ outputType: 'structured', outputSchema: { type: 'string', pattern: '(x)\\1' } })))).toMatchObject({ code: 'INVALID_PARAMETER', message: expect.stringMatching(/^outputSchema cannot be used: a pattern is not supported/) });
    await expect(checkTriggerTask(created({ outputType: 'structured', outputSchema: { type: 'string', pattern: '^(a+)+$' } }))).resolves.toBeUndefined();
  });

  it('checks only what an update gives', async () => {
    await expect(checkTriggerTask({})).resolves.toBeUndefined();
    expect(await refusal(checkTriggerTask({ prompt: '' }))).toMatchObject({ code: 'INVALID_TASK_DETAILS' });
  });

  it('runs with the task defaults, structured as structured_json, ending its session', () => {
    const trigger = { prompt: 'p', startingUrl: null, outputType: 'structured' as const, outputSchema: { type: 'object' }, maxCost: 0.5 };
    expect(triggerTaskParams(trigger)).toEqual({
      prompt: 'p',
      startingUrl: null,
      maxDuration: 300_000,
      maxInputTokens: 100_000,
      maxOutputTokens: 100_000,
      terminateOnCompletion: true,
      outputType: 'structured_json',
      outputSchema: { type: 'object' },
      files: [],
      maxCost: 0.5,
    });
    expect(triggerTaskParams({ ...trigger, outputType: 'text', maxCost: undefined })).not.toHaveProperty('outputSchema');
  });
});
