import { SchemaBusyError, SchemaLimitError, SchemaTimeoutError, SchemaWorkers } from './schema-workers';

const wide = (n: number, seed = 0) => ({ type: 'object', properties: Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${seed}_${i}`, { type: 'string' }])) });

describe('schema worker threads', () => {
  let pool: SchemaWorkers;
  afterEach(() => pool.close());

  it('checks and applies schemas off the calling thread', async () => {
    pool = new SchemaWorkers({ threads: 2 });
    expect(await pool.problem({ type: 'object', required: 'a' })).toBe('outputSchema is not a valid JSON Schema: outputSchema.required must be array');
    expect(await pool.checkJson({ type: 'number' }, '"x"')).toEqual({ ok: false, error: 'The output does not match the JSON Schema: $: must be number' });
    const answers = await Promise.all([1, 2, 3, 4].map((i) => pool.errors(wide(50, i), { [`f${i}_0`]: i })));
    expect(answers).toEqual([1, 2, 3, 4].map((i) => [`$.f${i}_0: must be string`]));
  });

  it('ends a job that runs past its time limit, replaces the thread and goes on', async () => {
    pool = new SchemaWorkers({ threads: 1, timeoutMs: 1 });
    await expect(pool.problem(wide(1000))).rejects.toBeInstanceOf(SchemaTimeoutError);
    expect(pool.pending).toBe(0);
  });

  it('ends a thread that runs out of its heap, as a limit of the job', async () => {
    pool = new SchemaWorkers({ threads: 1, maxHeapMb: 4 });
    const err = await pool.problem(wide(3000)).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaLimitError);
    expect((err as Error).message).toBe('used more than 4 MB');
  });

  it('refuses jobs beyond its queue at once', async () => {
    pool = new SchemaWorkers({ threads: 1, maxQueue: 1 });
    const first = pool.problem(wide(200, 1));
    const second = pool.problem(wide(200, 2));
    await expect(pool.problem(wide(200, 3))).rejects.toBeInstanceOf(SchemaBusyError);
    expect(await Promise.all([first, second])).toEqual([null, null]);
  });
});
