export default async function globalTeardown(): Promise<void> {
  const e2e = (globalThis as any).__e2e;
  if (!e2e) return;
  const code = await e2e.service.stop('SIGTERM');
  if (code !== 0) process.stderr.write(`service exited with ${code}\n${e2e.service.output().slice(-3000)}\n`);
  await e2e.fixtures.close();
  await e2e.model.close();
}
