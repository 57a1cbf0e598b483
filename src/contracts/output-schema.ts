/**
 * The cheap checks of a task's `outputSchema`, done when a request is parsed (no schema is
 * compiled here: that happens on a schema thread, agent/structured-output.ts).
 */
/** Largest `outputSchema`, serialized (UTF-8 bytes of its JSON). */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Deepest nesting of JSON objects and arrays in an `outputSchema`. */
export const MAX_SCHEMA_DEPTH = 64;

export const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Nesting depth of a JSON value, without recursion (a hostile document cannot overflow the stack). */
function depthOf(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (d > max) max = d;
    if (max > MAX_SCHEMA_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/**
 * The cheap checks of an `outputSchema` for `structured_json`, done before anything else:
 * an object, at most 64 KB serialized, at most 64 levels deep.
 */
export function outputSchemaLimitProblem(schema: unknown): string | null {
  if (!isJsonObject(schema)) return 'outputSchema must be a JSON Schema object';
  // Depth first: serializing a very deep document would itself overflow the stack.
  if (depthOf(schema) > MAX_SCHEMA_DEPTH) return `outputSchema is nested deeper than ${MAX_SCHEMA_DEPTH} levels`;
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES) return `outputSchema is larger than ${MAX_SCHEMA_BYTES / 1024} KB (${bytes} bytes serialized)`;
  return null;
}

/** The column list of `structured_csv`, or what is wrong with it. */
export function csvColumnsProblem(columns: unknown): string | null {
  if (!Array.isArray(columns) || columns.length === 0) return 'outputSchema must be a non-empty array of column names';
  if (columns.some((c) => typeof c !== 'string' || !c.trim())) return 'outputSchema column names must be non-empty strings';
  if (new Set(columns).size !== columns.length) return 'outputSchema column names must be unique';
  return null;
}
