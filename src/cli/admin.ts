/**
 * Admin CLI for self-hosters: users, balances and API keys.
 *   npm run admin -- users create --email E [--balance N] [--session-limit N] [--expires-in 30d]
 *   npm run admin -- users list | users topup --user U --amount N | users deactivate --user U | users activate --user U
 *   npm run admin -- users set-limit --user U --limit N
 *   npm run admin -- users set-daily-limit --user U --usd N   (most USD the user's tasks may cost per UTC day; --usd off lifts it)
 *   npm run admin -- keys create --user U [--expires-in 30d] | keys revoke --key K | keys list --user U
 * `--expires-in` takes a number with s, m, h, d or w (seconds .. weeks); after it the key is
 * refused with 401 API_KEY_EXPIRED. A negative amount may be written `--amount -5` or `--amount=-5`.
 * Every command prints one line of JSON.
 */
import { parseArgs } from 'node:util';
import { loadConfigOrExit } from '../config';
import { connectMongo } from '../store/mongo';
import { createStore, type Store } from '../store/store';
import { utcDay, type UserRecord } from '../store/users.repository';

class UsageError extends Error {}

/** The flags each command accepts; anything else is a usage error. */
const COMMANDS: Record<string, readonly string[]> = {
  'users create': ['email', 'balance', 'session-limit', 'expires-in'],
  'users list': [],
  'users topup': ['user', 'amount'],
  'users deactivate': ['user'],
  'users activate': ['user'],
  'users set-limit': ['user', 'limit'],
  'users set-daily-limit': ['user', 'usd'],
  'keys create': ['user', 'expires-in'],
  'keys revoke': ['key'],
  'keys list': ['user'],
};
const FLAGS = [...new Set(Object.values(COMMANDS).flat())];

type Flags = Record<string, string | undefined>;

/** `--amount -5` → `--amount=-5`: parseArgs would read a value that starts with a dash as another flag. */
function joinNegativeValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (/^--[a-z-]+$/.test(argv[i]) && /^-\d/.test(argv[i + 1] ?? '')) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

/** `users create --email a@b` → the command and its flags, through node:util parseArgs. */
export function parseCommand(argv: string[]): { command: string; flags: Flags } {
  let parsed: ReturnType<typeof parseArgs<{ options: Record<string, { type: 'string' }>; allowPositionals: true; strict: true }>>;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv), options: Object.fromEntries(FLAGS.map((f) => [f, { type: 'string' as const }])), allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  const [group, cmd, ...extra] = parsed.positionals;
  const command = [group, cmd].filter(Boolean).join(' ');
  const allowed = COMMANDS[command];
  if (!allowed) throw new UsageError(`unknown command "${command}"; see src/cli/admin.ts`);
  if (extra.length) throw new UsageError(`unexpected argument: ${extra[0]}`);
  const flags = parsed.values as Flags;
  const stray = Object.keys(flags).find((f) => !allowed.includes(f));
  if (stray) throw new UsageError(`${command} does not take --${stray}`);
  return { command, flags };
}

function need(f: Flags, name: string): string {
  const v = f[name];
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

function amount(raw: string, name: string, min = 0): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number >= ${min}`);
  return n;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `90m`, `45s`, `2w` → milliseconds. */
export function parseDuration(raw: string, name = 'expires-in'): number {
  const m = /^(\d+)([smhdw])$/.exec(raw.trim());
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]] : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new UsageError(`--${name} must be a positive duration such as 30d, 12h, 90m or 45s`);
  return ms;
}

const expiry = (f: Flags, now = Date.now()): Date | null => (f['expires-in'] ? new Date(now + parseDuration(f['expires-in'])) : null);

const publicUser = (u: UserRecord, now = new Date()) => ({
  userId: u._id,
  email: u.email,
  balance: u.balance,
  status: u.status,
  sessionLimit: u.sessionLimit,
  activeSessions: u.activeSessions,
  dailyLimit: u.dailyLimit ?? null,
  spentToday: u.spentToday?.day === utcDay(now) ? u.spentToday.usd : 0,
});

async function run(store: Store, defaultLimit: number, argv: string[]): Promise<unknown> {
  const { command, flags: f } = parseCommand(argv);
  const userOr404 = async (id: string) => {
    const u = await store.users.get(id);
    if (!u) throw new UsageError(`no user ${id}`);
    return u;
  };
  switch (command) {
    case 'users create': {
      const email = need(f, 'email');
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError('--email must be an email address');
      const expiresAt = expiry(f);
      const user = await store.users.create(email, amount(f.balance ?? '0', 'balance'), Math.floor(amount(f['session-limit'] ?? String(defaultLimit), 'session-limit', 1)));
      const { key } = await store.apiKeys.create(user._id, { expiresAt });
      return { userId: user._id, apiKey: key, ...(expiresAt ? { expiresAt } : {}) };
    }
    case 'users list':
      return { users: (await store.users.list()).map((u) => publicUser(u)) };
    case 'users topup': {
      const u = await store.users.topUp(need(f, 'user'), amount(need(f, 'amount'), 'amount', -1e9));
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'users deactivate':
    case 'users activate': {
      const u = await store.users.setStatus(need(f, 'user'), command === 'users activate' ? 'active' : 'deactivated');
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'users set-limit': {
      const u = await store.users.setSessionLimit(need(f, 'user'), Math.floor(amount(need(f, 'limit'), 'limit', 1)));
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'users set-daily-limit': {
      const usd = need(f, 'usd');
      const u = await store.users.setDailyLimit(need(f, 'user'), usd === 'off' ? null : amount(usd, 'usd', 0));
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'keys create': {
      const expiresAt = expiry(f);
      const u = await userOr404(need(f, 'user'));
      const { key, record } = await store.apiKeys.create(u._id, { expiresAt });
      return { userId: u._id, keyId: record._id, apiKey: key, expiresAt: record.expiresAt ?? null };
    }
    case 'keys revoke': {
      const revoked = await store.apiKeys.revoke(need(f, 'key'));
      if (!revoked) throw new UsageError('no such live key');
      return { revoked: true };
    }
    case 'keys list': {
      const u = await userOr404(need(f, 'user'));
      return { keys: (await store.apiKeys.listForUser(u._id)).map((k) => ({ keyId: k._id, prefix: k.prefix, createdAt: k.createdAt, revokedAt: k.revokedAt, expiresAt: k.expiresAt ?? null })) };
    }
    default:
      throw new UsageError(`unknown command "${command}"; see src/cli/admin.ts`);
  }
}

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const { client, db } = await connectMongo(config.MONGODB_URL);
  try {
    const out = await run(createStore(db), config.DEFAULT_SESSION_LIMIT, process.argv.slice(2));
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } catch (err) {
    process.stderr.write(`${JSON.stringify({ error: err instanceof Error ? err.message : String(err) })}\n`);
    process.exitCode = err instanceof UsageError ? 2 : 1;
  } finally {
    await client.close();
  }
}

if (require.main === module) void main();
