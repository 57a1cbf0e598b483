/**
 * What the action gate (secrets and the automation policy) adds to one agent action, on the
 * account fixture page in Chromium: typing into a field and clicking a button, without a
 * policy and with a policy of 20 rules (keywords, URL patterns, sensitive-data detectors and
 * an allowlist, so the element and its form are read from the page). Prints JSON; also
 * writes it to BENCH_POLICY_OUT when set.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { gateAction } from '../src/agent/action-gate';
import { observePage } from '../src/agent/observe/observe';
import { CompiledPolicy } from '../src/agent/policy/policy';
import type { PolicyRule } from '../src/contracts/policy-rules';
import { TaskSecrets } from '../src/agent/secrets/secrets';
import { agentTools } from '../src/agent/tools';
import type { AgentTool, ToolContext } from '../src/agent/types';
import { startFixtureServer } from '../test/support/fixtures-server';
import { ROOT } from '../test/support/service';

const ROUNDS = Number(process.env.BENCH_POLICY_ROUNDS ?? 100);
const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] * 1000) / 1000;
const p95 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)] * 1000) / 1000;

it('action gate cost with a policy of 20 rules', async () => {
  const server = await startFixtureServer(path.join(ROOT, 'test/fixtures'));
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const context = await browser.newContext({ viewport: { width: 1024, height: 600 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/account.html`);
    const observation = await observePage(page, { tokenBudget: 6000 });
    const index = (label: string) => Number(new RegExp(`\\[(\\d+)\\][^\\n]*"${label}`).exec(observation.text)![1]);
    const ctx = { page, context, setActivePage: () => undefined, navigationTimeoutMs: 30_000, signal: new AbortController().signal } as ToolContext;
    const tool = (name: string) => agentTools.find((t) => t.name === name) as AgentTool;
    const rules: PolicyRule[] = Array.from({ length: 20 }, (_, i) => ({
      effect: i % 3 === 0 ? 'block' : i % 3 === 1 ? 'approve' : 'allow',
      actionTypes: i % 2 ? ['input_text', 'click_element'] : ['navigate', 'send_keys'],
      keywords: [`never-${i}`, `forbidden word ${i}`],
      urlPatterns: [`*/nowhere-${i}/*`],
      sensitiveData: ['card_number', 'iban', 'email', 'phone', 'api_key', { name: `custom_${i}`, pattern: `(?i)ref-${i}-\\d{6}` }],
    }));
    const policy = new CompiledPolicy({ _id: 'pol_bench', name: 'bench', domainRules: { mode: 'allowlist', domains: [new URL(server.url).host, '*.example.com'] }, rules });
    const secrets = new TaskSecrets([{ match: new URL(server.url).hostname, fields: { note: 'a note kept secret' } }]);
    const actions = [
      { name: 'input_text', args: { index: index('Note'), text: '<secret>note</secret>', clear: true } },
      { name: 'click_element', args: { index: index('Save settings') } },
    ];
    const out: Record<string, unknown> = { rounds: ROUNDS, rules: rules.length };
    for (const a of actions) {
      for (const [label, p] of [['noPolicy', null], ['policy20', policy]] as const) {
        const gate: number[] = [];
        const whole: number[] = [];
        for (let i = 0; i < ROUNDS + 20; i++) {
          const t0 = performance.now();
          const outcome = await gateAction({ tool: tool(a.name), args: a.args, ctx, policy: p, secrets });
          const t1 = performance.now();
          if (outcome.kind !== 'perform') throw new Error(`the bench action was ${outcome.kind}`);
          await tool(a.name).execute(ctx, outcome.args as never);
          const t2 = performance.now();
          if (i >= 20) {
            gate.push(t1 - t0);
            whole.push(t2 - t0);
          }
        }
        out[`${a.name}.${label}`] = { gateP50Ms: p50(gate), gateP95Ms: p95(gate), actionP50Ms: p50(whole), actionP95Ms: p95(whole) };
      }
    }
    const json = JSON.stringify(out, null, 2);
    process.stdout.write(`${json}\n`);
    if (process.env.BENCH_POLICY_OUT) fs.writeFileSync(process.env.BENCH_POLICY_OUT, json);
  } finally {
    await browser.close();
    await server.close();
  }
}, 600_000);
