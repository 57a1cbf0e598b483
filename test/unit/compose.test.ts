/**
 * Static checks of the deployment files (no Docker engine needed):
 *   docker-compose.yml — the compose schema's shape, the wiring between services, the shared app environment
 *   Dockerfile         — multi-stage build, Debian Chromium, non-root user, tini, the entry point
 *   .dockerignore      — no local state or dependencies in the build context
 * The checkers return lists of problems; the last block feeds them broken variants to prove they can fail.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { configSchema, loadConfig } from '../../src/config';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => structuredClone(v);

// ---------------------------------------------------------------------------------------------
// Compose interpolation (https://docs.docker.com/reference/compose-file/interpolation/)
// ---------------------------------------------------------------------------------------------

/** Values given to the required `${VAR:?…}` variables when the file is rendered in these tests. */
const SAMPLE_ENV: Record<string, string> = {
  PAYLOAD_ENCRYPTION_KEY: '0123456789abcdef'.repeat(4),
  VIEW_TOKEN_SECRET: 'test-view-token-secret-0123456789',
};

interface Interpolation {
  value: string;
  /** Variables that are referenced without a default and without `?` (compose would warn and use ""). */
  unset: string[];
  /** Variables that compose would refuse to start without (`${VAR:?err}` with VAR unset). */
  missing: string[];
}

function interpolate(input: string, env: Record<string, string | undefined>): Interpolation {
  const unset: string[] = [];
  const missing: string[] = [];
  let out = '';
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c !== '$') {
      out += c;
      i += 1;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    const bare = /^[A-Za-z_][A-Za-z0-9_]*/.exec(input.slice(i + 1));
    if (bare) {
      const name = bare[0];
      if (env[name] === undefined) unset.push(name);
      out += env[name] ?? '';
      i += 1 + name.length;
      continue;
    }
    if (next !== '{') {
      out += '$';
      i += 1;
      continue;
    }
    // ${...}: find the matching brace (defaults may nest further ${...}).
    let depth = 1;
    let j = i + 2;
    for (; j < input.length && depth > 0; j++) {
      if (input[j] === '{') depth += 1;
      else if (input[j] === '}') depth -= 1;
    }
    if (depth !== 0) throw new Error(`unterminated \${ in ${JSON.stringify(input)}`);
    const body = input.slice(i + 2, j - 1);
    const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])([\s\S]*))?$/.exec(body);
    if (!m) throw new Error(`invalid interpolation \${${body}} in ${JSON.stringify(input)}`);
    const [, name, op, arg = ''] = m;
    const raw = env[name];
    const isSet = op?.startsWith(':') ? raw !== undefined && raw !== '' : raw !== undefined;
    const nested = () => {
      const r = interpolate(arg, env);
      unset.push(...r.unset);
      missing.push(...r.missing);
      return r.value;
    };
    if (!op) {
      if (raw === undefined) unset.push(name);
      out += raw ?? '';
    } else if (op.endsWith('-')) {
      out += isSet ? raw : nested();
    } else if (op.endsWith('?')) {
      if (!isSet) missing.push(name);
      out += raw ?? '';
    } else {
      out += isSet ? nested() : '';
    }
    i = j;
  }
  return { value: out, unset, missing };
}

/** Interpolates every string value of a parsed compose document (keys are left alone, as compose does). */
function render(doc: unknown, env: Record<string, string | undefined>) {
  const unset = new Set<string>();
  const missing = new Set<string>();
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      const r = interpolate(v, env);
      r.unset.forEach((n) => unset.add(n));
      r.missing.forEach((n) => missing.add(n));
      return r.value;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { doc: walk(doc) as Obj, unset: [...unset].sort(), missing: [...missing].sort() };
}

function parseCompose(text: string): Obj {
  const doc = YAML.parseDocument(text, { merge: true, uniqueKeys: true });
  const problems = [...doc.errors, ...doc.warnings].map((e) => e.message);
  if (problems.length) throw new Error(`docker-compose.yml does not parse:\n${problems.join('\n')}`);
  const js = doc.toJS({ maxAliasCount: 1000 }) as unknown;
  if (!isObj(js)) throw new Error('docker-compose.yml is not a mapping');
  return js;
}

// ---------------------------------------------------------------------------------------------
// Compose schema shape
// ---------------------------------------------------------------------------------------------

const TOP_LEVEL_KEYS = new Set(['services', 'volumes', 'networks', 'configs', 'secrets', 'name']);
/** Properties of a service in the compose specification (schema/compose-spec.json, `$defs.service`). */
const SERVICE_KEYS = new Set(
  `annotations attach blkio_config build cap_add cap_drop cgroup cgroup_parent command configs container_name cpu_count
  cpu_percent cpu_period cpu_quota cpu_rt_period cpu_rt_runtime cpu_shares cpus cpuset credential_spec depends_on deploy
  develop device_cgroup_rules devices dns dns_opt dns_search domainname entrypoint env_file environment expose extends
  external_links extra_hosts gpus group_add healthcheck hostname image init ipc isolation label_file labels links logging
  mac_address mem_limit mem_reservation mem_swappiness memswap_limit models network_mode networks oom_kill_disable
  oom_score_adj pid pids_limit platform ports post_start pre_start pre_stop privileged profiles provider pull_policy
  pull_refresh_after read_only restart runtime scale secrets security_opt shm_size stdin_open stop_grace_period
  stop_signal storage_opt sysctls tmpfs tty ulimits use_api_socket user userns_mode uts volumes volumes_from working_dir`.split(
    /\s+/,
  ),
);
const HEALTHCHECK_KEYS = new Set(['disable', 'interval', 'retries', 'test', 'timeout', 'start_period', 'start_interval']);
const CONDITIONS = new Set(['service_started', 'service_healthy', 'service_completed_successfully']);
const RESTART = /^(no|always|unless-stopped|on-failure(:\d+)?)$/;
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const BYTES = /^(\d+(\.\d+)?)\s*(b|k|m|g|kb|mb|gb)?$/i;
const PORT_RANGE = String.raw`\d{1,5}(-\d{1,5})?`;
const HOST_IP = String.raw`(\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\])`;
const PORT = new RegExp(`^((${HOST_IP}:)?(${PORT_RANGE})?:)?${PORT_RANGE}(/(tcp|udp|sctp))?$`);
const ENV_NAME = /^[^\s=]+$/;

const isExtension = (k: string) => k.startsWith('x-');

function durationMs(d: unknown): number {
  if (typeof d !== 'string' || !DURATION.test(d)) return NaN;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  for (const [, n, , u] of d.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * unit[u];
  return ms;
}

function bytes(v: unknown): number {
  if (typeof v === 'number') return v;
  const m = typeof v === 'string' ? BYTES.exec(v) : null;
  if (!m) return NaN;
  const mult: Record<string, number> = { b: 1, k: 1024, kb: 1024, m: 1024 ** 2, mb: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3 };
  return Number(m[1]) * mult[(m[3] ?? 'b').toLowerCase()];
}

/** The environment of a service as a map (list entries `KEY=VALUE`; `KEY` alone means "taken from the shell"). */
function envMap(service: Obj): Record<string, string | undefined> {
  const env = service.environment;
  if (env === undefined) return {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((e) => {
        const s = String(e);
        const eq = s.indexOf('=');
        return eq < 0 ? [s, undefined] : [s.slice(0, eq), s.slice(eq + 1)];
      }),
    );
  }
  if (isObj(env)) return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v === null ? undefined : String(v)]));
  return {};
}

/** depends_on as a map name → condition. */
function dependsOn(service: Obj): Record<string, unknown> {
  const d = service.depends_on;
  if (Array.isArray(d)) return Object.fromEntries(d.map((n) => [String(n), 'service_started']));
  if (isObj(d)) return Object.fromEntries(Object.entries(d).map(([n, v]) => [n, isObj(v) ? v.condition : undefined]));
  return {};
}

function hasHealthcheck(service: Obj): boolean {
  const hc = service.healthcheck;
  if (!isObj(hc)) return false;
  if (hc.disable === true || hc.disable === 'true') return false;
  const t = hc.test;
  return !(Array.isArray(t) && t[0] === 'NONE');
}

/** Problems with the compose document's shape and its internal references. */
function checkComposeShape(doc: Obj): string[] {
  const errors: string[] = [];
  for (const key of Object.keys(doc)) {
    if (!TOP_LEVEL_KEYS.has(key) && !isExtension(key)) errors.push(`top level: key "${key}" is not allowed`);
  }
  if (!isObj(doc.services) || Object.keys(doc.services).length === 0) return [...errors, 'top level: no services'];
  const services = doc.services as Record<string, unknown>;
  const volumes = doc.volumes === undefined || doc.volumes === null ? {} : doc.volumes;
  if (!isObj(volumes)) errors.push('top level: volumes must be a mapping');
  const declaredVolumes = new Set(isObj(volumes) ? Object.keys(volumes) : []);
  const usedVolumes = new Set<string>();

  for (const [name, raw] of Object.entries(services)) {
    const at = `services.${name}`;
    if (!/^[a-zA-Z0-9._-]+$/.test(name)) errors.push(`${at}: invalid service name`);
    if (!isObj(raw)) {
      errors.push(`${at}: must be a mapping`);
      continue;
    }
    const svc = raw;
    for (const key of Object.keys(svc)) {
      if (!SERVICE_KEYS.has(key) && !isExtension(key)) errors.push(`${at}: unknown property "${key}"`);
    }
    if (svc.image === undefined && svc.build === undefined) errors.push(`${at}: needs image or build`);
    if (svc.image !== undefined && (typeof svc.image !== 'string' || svc.image.trim() === '')) errors.push(`${at}.image: must be a non-empty string`);
    if (svc.build !== undefined && typeof svc.build !== 'string' && !(isObj(svc.build) && (svc.build.context !== undefined || svc.build.dockerfile !== undefined)))
      errors.push(`${at}.build: must be a path or a mapping with context`);
    if (svc.restart !== undefined && !(typeof svc.restart === 'string' && RESTART.test(svc.restart))) errors.push(`${at}.restart: invalid "${String(svc.restart)}"`);

    // depends_on
    const d = svc.depends_on;
    if (d !== undefined && !Array.isArray(d) && !isObj(d)) errors.push(`${at}.depends_on: must be a list or a mapping`);
    if (isObj(d)) {
      for (const [target, spec] of Object.entries(d)) {
        if (!isObj(spec) || spec.condition === undefined) errors.push(`${at}.depends_on.${target}: needs a condition`);
      }
    }
    for (const [target, condition] of Object.entries(dependsOn(svc))) {
      if (target === name) errors.push(`${at}.depends_on: depends on itself`);
      if (!(target in services)) {
        errors.push(`${at}.depends_on: "${target}" is not a service`);
        continue;
      }
      if (typeof condition !== 'string' || !CONDITIONS.has(condition)) {
        errors.push(`${at}.depends_on.${target}: condition "${String(condition)}" is not one of ${[...CONDITIONS].join('|')}`);
      } else if (condition === 'service_healthy' && !hasHealthcheck(services[target] as Obj)) {
        errors.push(`${at}.depends_on.${target}: service_healthy but ${target} has no healthcheck`);
      } else if (condition === 'service_completed_successfully') {
        const targetRestart = (services[target] as Obj).restart;
        if (targetRestart === 'always' || targetRestart === 'unless-stopped')
          errors.push(`${at}.depends_on.${target}: service_completed_successfully but ${target} restarts forever`);
      }
    }

    // healthcheck
    if (svc.healthcheck !== undefined) {
      const hc = svc.healthcheck;
      if (!isObj(hc)) errors.push(`${at}.healthcheck: must be a mapping`);
      else {
        for (const key of Object.keys(hc)) if (!HEALTHCHECK_KEYS.has(key) && !isExtension(key)) errors.push(`${at}.healthcheck: unknown property "${key}"`);
        const t = hc.test;
        if (hc.disable !== true) {
          if (t === undefined) errors.push(`${at}.healthcheck: needs test`);
          else if (typeof t === 'string') {
            if (t.trim() === '') errors.push(`${at}.healthcheck.test: empty`);
          } else if (!Array.isArray(t) || t.length === 0 || !t.every((x) => typeof x === 'string')) {
            errors.push(`${at}.healthcheck.test: must be a string or a list of strings`);
          } else if (!['CMD', 'CMD-SHELL', 'NONE'].includes(t[0])) {
            errors.push(`${at}.healthcheck.test: a list must start with CMD, CMD-SHELL or NONE`);
          } else if (t[0] !== 'NONE' && t.length < 2) {
            errors.push(`${at}.healthcheck.test: ${t[0]} without a command`);
          }
        }
        for (const key of ['interval', 'timeout', 'start_period', 'start_interval']) {
          if (hc[key] !== undefined && Number.isNaN(durationMs(hc[key]))) errors.push(`${at}.healthcheck.${key}: "${String(hc[key])}" is not a duration`);
        }
        if (hc.retries !== undefined && !(Number.isInteger(Number(hc.retries)) && Number(hc.retries) > 0)) errors.push(`${at}.healthcheck.retries: must be a positive integer`);
      }
    }

    // ports
    if (svc.ports !== undefined) {
      if (!Array.isArray(svc.ports)) errors.push(`${at}.ports: must be a list`);
      else {
        for (const p of svc.ports) {
          if (typeof p === 'string') {
            if (!PORT.test(p)) errors.push(`${at}.ports: "${p}" is not [[IP:]HOST:]CONTAINER[/PROTOCOL]`);
          } else if (isObj(p)) {
            if (p.target === undefined) errors.push(`${at}.ports: long syntax needs target`);
          } else {
            // Numbers are allowed by the schema, but YAML reads 22:22-like values as base 60; always quote.
            errors.push(`${at}.ports: ${JSON.stringify(p)} must be a quoted string`);
          }
        }
        if (new Set(svc.ports.map((p) => JSON.stringify(p))).size !== svc.ports.length) errors.push(`${at}.ports: duplicate entries`);
      }
    }

    // environment
    const env = svc.environment;
    if (env !== undefined) {
      if (Array.isArray(env)) {
        for (const e of env) if (typeof e !== 'string' || !ENV_NAME.test(e.split('=')[0])) errors.push(`${at}.environment: invalid entry ${JSON.stringify(e)}`);
        if (new Set(env).size !== env.length) errors.push(`${at}.environment: duplicate entries`);
      } else if (isObj(env)) {
        for (const [k, v] of Object.entries(env)) {
          if (!ENV_NAME.test(k)) errors.push(`${at}.environment: invalid name "${k}"`);
          if (v !== null && !['string', 'number', 'boolean'].includes(typeof v)) errors.push(`${at}.environment.${k}: must be a scalar`);
        }
      } else errors.push(`${at}.environment: must be a mapping or a list`);
    }

    // volumes
    if (svc.volumes !== undefined) {
      if (!Array.isArray(svc.volumes)) errors.push(`${at}.volumes: must be a list`);
      else {
        for (const v of svc.volumes) {
          let source: string | undefined;
          let named = false;
          if (typeof v === 'string') {
            const parts = v.split(':');
            if (parts.length > 1) {
              source = parts[0];
              named = !/^[./~]/.test(source);
            }
            if (parts.length > 3 || parts.some((x) => x === '')) errors.push(`${at}.volumes: "${v}" is not SOURCE:TARGET[:MODE]`);
          } else if (isObj(v)) {
            if (v.target === undefined) errors.push(`${at}.volumes: long syntax needs target`);
            source = typeof v.source === 'string' ? v.source : undefined;
            named = (v.type ?? 'volume') === 'volume' && source !== undefined;
          } else errors.push(`${at}.volumes: invalid entry ${JSON.stringify(v)}`);
          if (named && source !== undefined) {
            usedVolumes.add(source);
            if (!declaredVolumes.has(source)) errors.push(`${at}.volumes: named volume "${source}" is not declared under top-level volumes`);
          }
        }
      }
    }

    for (const key of ['stop_grace_period']) {
      if (svc[key] !== undefined && Number.isNaN(durationMs(svc[key]))) errors.push(`${at}.${key}: "${String(svc[key])}" is not a duration`);
    }
    if (svc.shm_size !== undefined && Number.isNaN(bytes(svc.shm_size))) errors.push(`${at}.shm_size: "${String(svc.shm_size)}" is not a size`);
    if (svc.deploy !== undefined) {
      if (!isObj(svc.deploy)) errors.push(`${at}.deploy: must be a mapping`);
      else if (svc.deploy.replicas !== undefined && !(Number.isInteger(Number(svc.deploy.replicas)) && Number(svc.deploy.replicas) >= 0))
        errors.push(`${at}.deploy.replicas: must be a non-negative integer`);
      if (isObj(svc.deploy) && Number(svc.deploy.replicas) > 1) {
        if (svc.container_name !== undefined) errors.push(`${at}: container_name cannot be used with several replicas`);
        const fixedHostPort = Array.isArray(svc.ports) && svc.ports.some((p) => typeof p === 'string' && p.includes(':'));
        if (fixedHostPort) errors.push(`${at}: a fixed host port cannot be published by several replicas`);
      }
    }
  }
  for (const v of declaredVolumes) if (!usedVolumes.has(v)) errors.push(`volumes.${v}: declared but never used`);
  return errors;
}

// ---------------------------------------------------------------------------------------------
// What this project needs from the stack
// ---------------------------------------------------------------------------------------------

const SHARED_APP_ENV = ['MONGODB_URL', 'REDIS_URL', 'TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'PAYLOAD_ENCRYPTION_KEY'];
const REQUIRED_SERVICES = ['postgresql', 'temporal', 'temporal-ui', 'mongodb', 'redis', 'api', 'worker'];
const SEARCH_ATTRIBUTES = ['OwnerUserId', 'SessionStatus', 'TriggerId'];
const CONFIG_KEYS = new Set(Object.keys(configSchema.shape));

/** Named volumes mounted by a service, as target → volume name. */
function namedMounts(svc: Obj, declared: Set<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of Array.isArray(svc.volumes) ? svc.volumes : []) {
    if (typeof v === 'string') {
      const [src, dst] = v.split(':');
      if (dst !== undefined && declared.has(src)) out[dst] = src;
    } else if (isObj(v) && typeof v.source === 'string' && declared.has(v.source)) out[String(v.target)] = v.source;
  }
  return out;
}

const textOf = (v: unknown): string => (Array.isArray(v) ? v.map(String).join(' ') : v === undefined ? '' : String(v));

/** Problems with the services this project needs and how they are wired. */
function checkStack(doc: Obj): string[] {
  const errors: string[] = [];
  const services = (isObj(doc.services) ? doc.services : {}) as Record<string, Obj>;
  const declared = new Set(isObj(doc.volumes) ? Object.keys(doc.volumes) : []);
  for (const s of REQUIRED_SERVICES) if (!isObj(services[s])) errors.push(`missing service ${s}`);
  const setup = ['temporal-setup', 'temporal-admin-tools'].find((s) => isObj(services[s]));
  if (!setup) errors.push('missing service temporal-setup (or temporal-admin-tools)');
  if (errors.length) return errors;
  const { postgresql, temporal, mongodb, redis, api, worker } = services;
  const ui = services['temporal-ui'];

  const image = (svc: Obj, name: string, re: RegExp) => {
    if (typeof svc.image !== 'string' || !re.test(svc.image)) errors.push(`${name}: image "${String(svc.image)}" does not match ${re}`);
  };
  const healthTest = (svc: Obj, name: string, re: RegExp) => {
    if (!hasHealthcheck(svc)) errors.push(`${name}: needs a healthcheck`);
    else if (!re.test(textOf((svc.healthcheck as Obj).test))) errors.push(`${name}: healthcheck should match ${re}`);
  };
  const mount = (svc: Obj, name: string, target: string) => {
    if (!namedMounts(svc, declared)[target]) errors.push(`${name}: ${target} must be a named volume`);
  };
  const needs = (svc: Obj, name: string, target: string, condition: string) => {
    if (dependsOn(svc)[target] !== condition) errors.push(`${name}: must depend on ${target} with ${condition}`);
  };

  // Temporal and its database
  image(postgresql, 'postgresql', /^postgres:16(\b|$)/);
  mount(postgresql, 'postgresql', '/var/lib/postgresql/data');
  healthTest(postgresql, 'postgresql', /pg_isready/);
  image(temporal, 'temporal', /^temporalio\/auto-setup:/);
  const tEnv = envMap(temporal);
  if (tEnv.DB !== 'postgres12') errors.push('temporal: DB must be postgres12');
  if (tEnv.POSTGRES_SEEDS !== 'postgresql') errors.push('temporal: POSTGRES_SEEDS must name the postgresql service');
  if (tEnv.POSTGRES_USER !== envMap(postgresql).POSTGRES_USER) errors.push('temporal: POSTGRES_USER differs from postgresql');
  if (tEnv.POSTGRES_PWD !== envMap(postgresql).POSTGRES_PASSWORD) errors.push('temporal: POSTGRES_PWD differs from postgresql');
  needs(temporal, 'temporal', 'postgresql', 'service_healthy');
  healthTest(temporal, 'temporal', /\btctl\b|temporal operator cluster health/);

  // Namespace and search attributes
  const setupSvc = services[setup!];
  needs(setupSvc, setup!, 'temporal', 'service_healthy');
  const setupEnv = envMap(setupSvc);
  // A script of the repository mounted into the setup container counts as its command.
  const mounted = (Array.isArray(setupSvc.volumes) ? setupSvc.volumes : [])
    .map((v) => String(v).split(':')[0])
    .filter((src) => src.startsWith('./'))
    .map((src) => {
      const file = path.join(ROOT, src);
      if (!fs.existsSync(file) || !fs.statSync(file).isFile()) {
        errors.push(`${setup}: mounts ${src}, which is not a file of the repository`);
        return '';
      }
      return fs.readFileSync(file, 'utf8');
    });
  const script = [textOf(setupSvc.entrypoint), textOf(setupSvc.command), ...mounted, ...Object.values(setupEnv).map(String)].join('\n');
  if (!/namespace (create|register)/.test(script)) errors.push(`${setup}: does not create the namespace`);
  if (!/search-attribute create/.test(script) || !/--type Keyword/.test(script)) errors.push(`${setup}: does not create Keyword search attributes`);
  for (const sa of SEARCH_ATTRIBUTES) if (!new RegExp(`\\b${sa}\\b`).test(script)) errors.push(`${setup}: search attribute ${sa} is not created`);
  if (!/already exists/.test(script)) errors.push(`${setup}: must tolerate "already exists"`);
  if (!script.includes(envMap(api).TEMPORAL_NAMESPACE ?? '\0')) errors.push(`${setup}: does not create the app's namespace ${envMap(api).TEMPORAL_NAMESPACE}`);
  if (setup === 'temporal-setup' && setupSvc.restart !== undefined && setupSvc.restart !== 'no' && !String(setupSvc.restart).startsWith('on-failure'))
    errors.push('temporal-setup: a one-shot service must not restart forever');

  // Temporal UI
  image(ui, 'temporal-ui', /^temporalio\/ui(:|$)/);
  if (envMap(ui).TEMPORAL_ADDRESS !== tEnv.TEMPORAL_ADDRESS && envMap(ui).TEMPORAL_ADDRESS !== 'temporal:7233') errors.push('temporal-ui: TEMPORAL_ADDRESS must point at temporal:7233');
  if (!(Array.isArray(ui.ports) && ui.ports.some((p) => /(^|:)8080(\/tcp)?$/.test(String(p))))) errors.push('temporal-ui: must publish 8080');

  // MongoDB and Redis
  image(mongodb, 'mongodb', /^mongo:7(\b|$)/);
  mount(mongodb, 'mongodb', '/data/db');
  healthTest(mongodb, 'mongodb', /mongosh.*ping/);
  image(redis, 'redis', /^redis:7(\b|$)/);
  mount(redis, 'redis', '/data');
  healthTest(redis, 'redis', /redis-cli.*ping/);
  if (!/--appendonly\s+yes/.test(textOf(redis.command))) errors.push('redis: appendonly must be on');

  // api and worker
  for (const [name, svc] of [['api', api], ['worker', worker]] as const) {
    if (svc.build === undefined) errors.push(`${name}: must be built from the repository`);
    const context = typeof svc.build === 'string' ? svc.build : isObj(svc.build) ? svc.build.context : undefined;
    if (context !== '.' && context !== './') errors.push(`${name}: build context must be .`);
    for (const dep of ['mongodb', 'redis', 'temporal']) needs(svc, name, dep, 'service_healthy');
    needs(svc, name, setup!, setup === 'temporal-setup' ? 'service_completed_successfully' : 'service_started');
    const env = envMap(svc);
    for (const key of Object.keys(env)) if (!CONFIG_KEYS.has(key) && key !== 'NODE_ENV') errors.push(`${name}.environment: ${key} is not a setting of src/config.ts`);
    if (svc.stop_signal !== undefined && svc.stop_signal !== 'SIGTERM') errors.push(`${name}: stop_signal must be SIGTERM`);
  }
  if (envMap(api).ROLE !== 'api') errors.push('api: ROLE must be api');
  if (envMap(worker).ROLE !== 'worker') errors.push('worker: ROLE must be worker');
  for (const key of SHARED_APP_ENV) {
    const a = envMap(api)[key];
    const w = envMap(worker)[key];
    if (a === undefined || a === '') errors.push(`api: ${key} is not set`);
    if (a !== w) errors.push(`api and worker disagree on ${key} (${String(a)} vs ${String(w)})`);
  }
  if (!(Array.isArray(api.ports) && api.ports.some((p) => /(^|:)3000(\/tcp)?$/.test(String(p))))) errors.push('api: must publish container port 3000');
  healthTest(api, 'api', /\/start\/health/);
  if (!isObj(worker.deploy) || Number(worker.deploy.replicas) !== 2) errors.push('worker: deploy.replicas must be 2');
  if (!(bytes(worker.shm_size) >= 1024 ** 3)) errors.push('worker: shm_size must be at least 1gb');
  if (worker.ports !== undefined) errors.push('worker: must not publish ports (several replicas)');
  // Browser workers: never root, never privileged, Chromium's sandbox on.
  const workerUser = worker.user === undefined ? undefined : String(worker.user).split(':')[0];
  if (workerUser === 'root' || workerUser === '0') errors.push('worker: must not run as root');
  if (worker.privileged === true) errors.push('worker: must not be privileged');
  if (Array.isArray(worker.cap_add) && worker.cap_add.some((c) => /^(CAP_)?(SYS_ADMIN|ALL)$/i.test(String(c)))) errors.push('worker: must not add SYS_ADMIN');
  if (envMap(worker).CHROMIUM_SANDBOX !== 'true') errors.push('worker: CHROMIUM_SANDBOX must be "true"');
  const securityOpt = Array.isArray(worker.security_opt) ? worker.security_opt.map(String) : [];
  if (!securityOpt.some((o) => /^no-new-privileges(:true)?$/.test(o))) errors.push('worker: security_opt must include no-new-privileges:true');
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Dockerfile
// ---------------------------------------------------------------------------------------------

interface Instruction {
  op: string;
  args: string;
  stage: number;
}

/** Instructions with continuation lines joined and comments dropped; stage -1 is before the first FROM. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let stage = -1;
  let buf = '';
  const lines = text.split(/\r?\n/);
  for (const rawLine of lines) {
    const line = rawLine.trim();
    if (buf === '' && (line === '' || line.startsWith('#'))) continue;
    if (buf !== '' && line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      buf += `${line.slice(0, -1)} `;
      continue;
    }
    const full = (buf + line).trim();
    buf = '';
    if (full === '') continue;
    const m = /^(\S+)\s*([\s\S]*)$/.exec(full)!;
    const op = m[1].toUpperCase();
    if (op === 'FROM') stage += 1;
    out.push({ op, args: m[2], stage });
  }
  if (buf.trim() !== '') throw new Error('Dockerfile ends with a line continuation');
  return out;
}

function checkDockerfile(text: string, compose?: Obj): string[] {
  const errors: string[] = [];
  const ins = parseDockerfile(text);
  const globalArgs: Record<string, string> = {};
  for (const i of ins.filter((x) => x.stage === -1 && x.op === 'ARG')) {
    const [k, v = ''] = i.args.split('=');
    globalArgs[k.trim()] = v.trim();
  }
  const froms = ins.filter((i) => i.op === 'FROM');
  if (froms.length < 2) errors.push('Dockerfile: must be multi-stage (a build stage and a runtime stage)');
  for (const f of froms) {
    const base = f.args.split(/\s+/)[0].replace(/\$\{?(\w+)\}?/g, (_, n: string) => globalArgs[n] ?? '');
    const stageNames = froms.map((x) => /\bAS\s+(\S+)/i.exec(x.args)?.[1]).filter(Boolean);
    if (base !== 'node:20-bookworm-slim' && !stageNames.includes(base)) errors.push(`Dockerfile: stage base "${base}" is not node:20-bookworm-slim`);
  }
  const last = froms.length - 1;
  const inStage = (s: number) => ins.filter((i) => i.stage === s);
  const runs = (s: number) => inStage(s).filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');
  const allRuns = ins.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n');

  // build stage(s)
  const buildRuns = froms.slice(0, -1).map((_, s) => runs(s)).join('\n');
  if (!/\bnpm (ci|install)\b/.test(buildRuns)) errors.push('Dockerfile: the build stage must install the npm dependencies');
  if (!/\bnpm run build\b/.test(buildRuns)) errors.push('Dockerfile: the build stage must run npm run build');
  if (!/\bnpm prune --omit=dev\b/.test(buildRuns)) errors.push('Dockerfile: the build stage must run npm prune --omit=dev');

  // runtime stage
  const final = inStage(last);
  const finalRuns = runs(last);
  if (!/apt-get install\b[^\n]*\bchromium\b(?!-)/.test(finalRuns)) errors.push('Dockerfile: the runtime stage must apt-get install chromium');
  if (!/apt-get install\b[^\n]*\bfonts-liberation\b/.test(finalRuns)) errors.push('Dockerfile: the runtime stage must install fonts-liberation');
  if (/playwright\S*\s+install/.test(allRuns) || /playwright\S*\s+install/.test(text.replace(/^\s*#.*$/gm, '')))
    errors.push('Dockerfile: must never run playwright install');
  const copies = final.filter((i) => i.op === 'COPY').map((i) => i.args);
  if (!copies.some((c) => /--from=\S+/.test(c) && /\bdist\b/.test(c))) errors.push('Dockerfile: the runtime stage must copy dist/ from the build stage');
  const users = final.filter((i) => i.op === 'USER');
  const user = users.at(-1)?.args.trim().split(':')[0];
  if (!user) errors.push('Dockerfile: the runtime stage needs a USER');
  else if (user === 'root' || user === '0') errors.push('Dockerfile: USER must not be root');
  const execForm = (i?: Instruction): string[] | undefined => {
    if (!i) return undefined;
    try {
      const v = JSON.parse(i.args) as unknown;
      return Array.isArray(v) ? v.map(String) : undefined;
    } catch {
      return undefined;
    }
  };
  const cmdIns = final.filter((i) => i.op === 'CMD').at(-1);
  const cmd = execForm(cmdIns);
  if (!cmdIns) errors.push('Dockerfile: needs a CMD');
  else if (!cmd) errors.push('Dockerfile: CMD must use the exec (JSON) form so signals reach node');
  else if (!(cmd.includes('node') && cmd.some((a) => /(^|\/)dist\/main\.js$/.test(a)))) errors.push('Dockerfile: CMD must run node dist/main.js');
  const entry = execForm(final.filter((i) => i.op === 'ENTRYPOINT').at(-1));
  const composeInit = compose && ['api', 'worker'].every((s) => ((compose.services as Record<string, Obj>)[s] ?? {}).init === true);
  if (!(entry && /(^|\/)(tini|dumb-init)$/.test(entry[0])) && !composeInit) errors.push('Dockerfile: PID 1 must be tini (ENTRYPOINT) or compose init: true');
  if (entry && /(^|\/)tini$/.test(entry[0]) && !/apt-get install\b[^\n]*\btini\b/.test(finalRuns)) errors.push('Dockerfile: tini is used but not installed');
  const stop = final.filter((i) => i.op === 'STOPSIGNAL').at(-1)?.args.trim();
  if (stop !== 'SIGTERM') errors.push('Dockerfile: STOPSIGNAL must be SIGTERM');
  const envText = final.filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
  if (!/\bCHROMIUM_PATH=\/usr\/bin\/chromium\b/.test(envText)) errors.push('Dockerfile: ENV CHROMIUM_PATH=/usr/bin/chromium');
  if (final.some((i) => i.op === 'HEALTHCHECK' && !/^NONE$/i.test(i.args.trim()))) errors.push('Dockerfile: no image HEALTHCHECK (the worker role has no HTTP port)');
  if (!/\bCHROMIUM_SANDBOX=(true|1|yes)\b/.test(envText)) errors.push("Dockerfile: ENV CHROMIUM_SANDBOX=true (Chromium's sandbox on)");
  return errors;
}

// ---------------------------------------------------------------------------------------------
// The real files
// ---------------------------------------------------------------------------------------------

const composeText = read('docker-compose.yml');
const parsed = parseCompose(composeText);
const rendered = render(parsed, SAMPLE_ENV);
const compose = rendered.doc;
const services = compose.services as Record<string, Obj>;
const dockerfile = read('Dockerfile');

describe('docker-compose.yml', () => {
  test('parses (merge keys on, no duplicate keys) and has no obsolete version key', () => {
    expect(isObj(parsed.services)).toBe(true);
    expect(parsed).not.toHaveProperty('version');
  });

  test('every interpolated variable has a default or is required', () => {
    expect(rendered.unset).toEqual([]);
    expect(rendered.missing).toEqual([]);
    // Without the secrets, compose refuses to start instead of running with a generated or empty key.
    expect(render(parsed, {}).missing).toEqual(expect.arrayContaining(['PAYLOAD_ENCRYPTION_KEY', 'VIEW_TOKEN_SECRET']));
  });

  test('matches the compose schema shape', () => {
    expect(checkComposeShape(compose)).toEqual([]);
  });

  test('has the services this project needs, wired together', () => {
    expect(checkStack(compose)).toEqual([]);
  });

  test('api and worker share the app environment, and it is a valid configuration', () => {
    const api = envMap(services.api);
    const worker = envMap(services.worker);
    for (const key of SHARED_APP_ENV) expect([key, worker[key]]).toEqual([key, api[key]]);
    // Same settings except the role and the worker's drain time.
    const strip = (e: Record<string, string | undefined>) => {
      const { ROLE: _r, SHUTDOWN_GRACE_MS: _s, ...rest } = e;
      return rest;
    };
    expect(strip(worker)).toEqual(strip(api));
    // In the source file the two environments come from one x- extension map.
    for (const name of ['api', 'worker']) {
      expect(composeText).toMatch(new RegExp(`\\n  ${name}:\\n(?:    .*\\n|\\s*\\n)*?    environment:\\n      <<: \\*app-environment\\n`));
    }
    for (const [name, env] of [['api', api], ['worker', worker]] as const) {
      const cfg = loadConfig(env);
      expect(cfg.ROLE).toBe(name);
      expect(cfg.TEMPORAL_NAMESPACE).toBe('browser-agent');
      expect(cfg.MONGODB_URL).toMatch(/^mongodb:\/\/mongodb:27017\//);
      expect(cfg.REDIS_URL).toMatch(/^redis:\/\/redis:6379/);
      expect(cfg.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(cfg.CHROMIUM_PATH).toBe('/usr/bin/chromium');
      expect(cfg.PAYLOAD_ENCRYPTION_KEY).toBe(SAMPLE_ENV.PAYLOAD_ENCRYPTION_KEY);
      expect(cfg.PORT).toBe(3000);
    }
  });

  test('stop grace periods outlast the drain time of each role', () => {
    for (const name of ['api', 'worker']) {
      const svc = services[name];
      const drain = loadConfig(envMap(svc)).SHUTDOWN_GRACE_MS;
      expect(durationMs(svc.stop_grace_period)).toBeGreaterThan(drain);
    }
    expect(durationMs(services.worker.stop_grace_period)).toBeGreaterThanOrEqual(5 * 60_000);
  });

  test('the api healthcheck probes /start/health on the configured port', () => {
    const port = loadConfig(envMap(services.api)).PORT;
    expect(textOf((services.api.healthcheck as Obj).test)).toContain(`:${port}/start/health`);
  });

  test('the Temporal namespace created by the setup service is the one the app uses', () => {
    const ns = envMap(services.api).TEMPORAL_NAMESPACE;
    expect(envMap(services['temporal-setup']).NAMESPACE).toBe(ns);
    expect(envMap(services['temporal-ui']).TEMPORAL_DEFAULT_NAMESPACE).toBe(ns);
  });
});

describe('the local model (profile local-model)', () => {
  test('the weights are fetched, then chosen by LLM_QUANT, then loaded by the model service from the same volume', () => {
    const [fetch, select, model] = ['model-fetch', 'model-select', 'model'].map((n) => services[n]);
    for (const svc of [fetch, select, model]) expect(svc.profiles).toEqual(['local-model']);
    expect(select.depends_on).toEqual({ 'model-fetch': { condition: 'service_completed_successfully' } });
    expect(model.depends_on).toEqual({ 'model-select': { condition: 'service_completed_successfully', restart: true } });
    // The script links what it chose as models/selected.gguf under BAS_CACHE_DIR; the model service loads that link.
    const cacheMount = (svc: Obj) => (svc.volumes as string[]).find((v) => v.startsWith('model-cache:'))?.split(':')[1];
    expect(envMap(select).BAS_CACHE_DIR).toBe(cacheMount(select));
    expect(envMap(model).LLM_MODEL).toBe(`${cacheMount(model)}/models/selected.gguf`);
    expect(textOf(select.entrypoint)).toContain('select_local_model');
    expect(render(parsed, { ...SAMPLE_ENV, LLM_QUANT: 'q4_1' }).doc.services).toHaveProperty(['model-select', 'environment', 'LLM_QUANT'], 'q4_1');
    // Built from the Dockerfile's stage that has python3 and node-llama-cpp's library, with scripts/ mounted where lib.sh looks for node_modules.
    expect(select.build).toEqual({ context: '.', target: 'model-tools' });
    const stage = parseDockerfile(dockerfile).filter((i) => i.op === 'FROM').findIndex((i) => /\bAS\s+model-tools\b/i.test(i.args));
    expect(stage).toBeGreaterThanOrEqual(0);
    const ins = parseDockerfile(dockerfile).filter((i) => i.stage === stage);
    expect(ins.filter((i) => i.op === 'RUN').map((i) => i.args).join('\n')).toMatch(/apt-get install\b[^\n]*\bpython3\b/);
    const workdir = ins.find((i) => i.op === 'WORKDIR')?.args.trim();
    // node-llama-cpp's CPU library only, from a stage that copies the platform's package out of the build stage.
    const from = /--from=(\S+)\s+(\S+)\s+\.\/node_modules\/@node-llama-cpp\/?$/.exec(ins.find((i) => i.op === 'COPY')?.args.trim() ?? '');
    expect(from).not.toBeNull();
    const source = parseDockerfile(dockerfile).find((i) => i.op === 'FROM' && new RegExp(`\\bAS\\s+${from![1]}\\b`, 'i').test(i.args));
    expect(source?.args).toMatch(/^build\s+AS\s/i);
    const copied = parseDockerfile(dockerfile).filter((i) => i.stage === source!.stage && i.op === 'RUN').map((i) => i.args).join('\n');
    expect(copied).toMatch(/linux-x64\b(?!-)/);
    expect(copied).not.toMatch(/cuda|vulkan/);
    expect(select.volumes).toContain(`./scripts:${workdir}/scripts:ro`);
  });
});

describe('Dockerfile', () => {
  test('multi-stage build on node:20-bookworm-slim with Debian Chromium, non-root, tini, dist/main.js', () => {
    expect(checkDockerfile(dockerfile, compose)).toEqual([]);
  });

  test('the image and compose agree on the Chromium path', () => {
    const env = parseDockerfile(dockerfile).filter((i) => i.op === 'ENV').map((i) => i.args).join(' ');
    const inImage = /\bCHROMIUM_PATH=(\S+)/.exec(env)?.[1];
    expect(inImage).toBe(envMap(services.worker).CHROMIUM_PATH);
  });

  test('.dockerignore keeps dependencies, build output, local state and secrets out of the context', () => {
    const entries = read('.dockerignore')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    expect(entries).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git', '.data', '.env']));
    // What the build stage copies must not be ignored.
    for (const needed of ['src', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) expect(entries).not.toContain(needed);
  });
});

describe('the checkers catch broken files', () => {
  const broken = (mutate: (doc: Obj) => void) => {
    const doc = clone(compose);
    mutate(doc);
    return [...checkComposeShape(doc), ...checkStack(doc)];
  };
  const svcs = (doc: Obj) => doc.services as Record<string, Obj>;

  test('depends_on pointing to a missing service', () => {
    const errors = broken((d) => {
      (svcs(d).api.depends_on as Obj).mongo = { condition: 'service_healthy' };
    });
    expect(errors).toContain('services.api.depends_on: "mongo" is not a service');
  });

  test('a dependency removed from the stack', () => {
    const errors = broken((d) => {
      delete svcs(d).redis;
    });
    expect(errors).toEqual(expect.arrayContaining(['services.api.depends_on: "redis" is not a service', 'missing service redis']));
  });

  test('an unknown condition, and service_healthy on a service without healthcheck', () => {
    const errors = broken((d) => {
      (svcs(d).api.depends_on as Obj).redis = { condition: 'service_ready' };
      svcs(d).worker.depends_on = { ...(svcs(d).worker.depends_on as Obj), 'temporal-ui': { condition: 'service_healthy' } };
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        'services.api.depends_on.redis: condition "service_ready" is not one of service_started|service_healthy|service_completed_successfully',
        'services.worker.depends_on.temporal-ui: service_healthy but temporal-ui has no healthcheck',
      ]),
    );
  });

  test('an undeclared named volume, a healthcheck without test, a bad port, a bad environment', () => {
    const errors = broken((d) => {
      svcs(d).mongodb.volumes = ['mongo-data:/data/db'];
      delete (svcs(d).redis.healthcheck as Obj).test;
      svcs(d).api.ports = [3000, '3000:http'];
      svcs(d).worker.environment = 'ROLE=worker';
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        'services.mongodb.volumes: named volume "mongo-data" is not declared under top-level volumes',
        'services.redis.healthcheck: needs test',
        'services.api.ports: 3000 must be a quoted string',
        'services.api.ports: "3000:http" is not [[IP:]HOST:]CONTAINER[/PROTOCOL]',
        'services.worker.environment: must be a mapping or a list',
      ]),
    );
  });

  test('a top-level version key, a service without image or build, a misspelt property', () => {
    const errors = broken((d) => {
      d.version = '3.8';
      delete svcs(d)['temporal-ui'].image;
      svcs(d).worker.depend_on = svcs(d).worker.depends_on;
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        'top level: key "version" is not allowed',
        'services.temporal-ui: needs image or build',
        'services.worker: unknown property "depend_on"',
      ]),
    );
  });

  test('api and worker with different payload keys or databases', () => {
    const errors = broken((d) => {
      (svcs(d).worker.environment as Obj).PAYLOAD_ENCRYPTION_KEY = 'f'.repeat(64);
      (svcs(d).api.environment as Obj).MONGODB_URL = 'mongodb://elsewhere:27017/x';
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^api and worker disagree on PAYLOAD_ENCRYPTION_KEY/),
        expect.stringMatching(/^api and worker disagree on MONGODB_URL/),
      ]),
    );
  });

  test('a setup service that forgets a search attribute, a worker without replicas or shm', () => {
    const errors = broken((d) => {
      const setup = svcs(d)['temporal-setup'];
      setup.command = textOf(setup.command).replace(/TriggerId/g, '');
      (setup.environment as Obj).SEARCH_ATTRIBUTES = 'OwnerUserId SessionStatus';
      delete svcs(d).worker.deploy;
      delete svcs(d).worker.shm_size;
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        'temporal-setup: search attribute TriggerId is not created',
        'worker: deploy.replicas must be 2',
        'worker: shm_size must be at least 1gb',
      ]),
    );
  });

  test('a browser worker as root, privileged, or with the sandbox off', () => {
    const errors = broken((d) => {
      svcs(d).worker.user = '0:0';
      svcs(d).worker.privileged = true;
      svcs(d).worker.cap_add = ['SYS_ADMIN'];
      svcs(d).worker.security_opt = ['seccomp=unconfined'];
      (svcs(d).worker.environment as Obj).CHROMIUM_SANDBOX = 'false';
    });
    expect(errors).toEqual(
      expect.arrayContaining([
        'worker: must not run as root',
        'worker: must not be privileged',
        'worker: must not add SYS_ADMIN',
        'worker: CHROMIUM_SANDBOX must be "true"',
        'worker: security_opt must include no-new-privileges:true',
      ]),
    );
    expect(checkDockerfile(dockerfile.replace('CHROMIUM_SANDBOX=true', 'CHROMIUM_SANDBOX=false'))).toContain("Dockerfile: ENV CHROMIUM_SANDBOX=true (Chromium's sandbox on)");
  });

  test('an unescaped $VAR or a malformed ${ in the compose file', () => {
    expect(render({ command: 'echo $NAMESPACE and $$HOME' }, {})).toMatchObject({ doc: { command: 'echo  and $HOME' }, unset: ['NAMESPACE'] });
    expect(() => render({ command: 'echo ${1abc}' }, {})).toThrow(/invalid interpolation/);
    expect(render({ a: '${X:-${Y:-deep}}', b: '${Z:?need Z}' }, {})).toMatchObject({ doc: { a: 'deep', b: '' }, missing: ['Z'] });
  });

  test('a Dockerfile that runs playwright install, as root, without chromium', () => {
    const bad = dockerfile
      .replace(/^USER .*$/m, 'USER root')
      .replace(/\bchromium \\\n/, '\\\n')
      .replace(/^CMD .*$/m, 'CMD node dist/index.js')
      .replace(/^STOPSIGNAL .*$/m, '')
      .concat('\nRUN npx playwright install --with-deps chromium\n');
    expect(checkDockerfile(bad)).toEqual(
      expect.arrayContaining([
        'Dockerfile: must never run playwright install',
        'Dockerfile: USER must not be root',
        'Dockerfile: the runtime stage must apt-get install chromium',
        'Dockerfile: CMD must use the exec (JSON) form so signals reach node',
        'Dockerfile: STOPSIGNAL must be SIGTERM',
      ]),
    );
    expect(checkDockerfile('FROM node:20\nRUN npm ci\nCMD ["node", "dist/main.js"]\n')).toEqual(
      expect.arrayContaining(['Dockerfile: must be multi-stage (a build stage and a runtime stage)', 'Dockerfile: the runtime stage needs a USER']),
    );
  });
});
