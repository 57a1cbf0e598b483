/**
 * Admin CLI for self-hosters: users, balances and API keys.
 *   npm run admin -- users create --email E [--balance N] [--session-limit N]
 *   npm run admin -- users list | users topup --user U --amount N | users deactivate --user U | users activate --user U
 *   npm run admin -- keys create --user U | keys revoke --key K | keys list --user U
 * Every command prints one line of JSON.
 */
import { loadConfigOrExit } from '../config';
import { connectMongo } from '../store/mongo';
import { createStore, type Store } from '../store/store';

class UsageError extends Error {}

function flags(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) throw new UsageError(`unexpected argument: ${a}`);
    const value = args[i + 1];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${a} needs a value`);
    out[a.slice(2)] = value;
    i++;
  }
  return out;
}

function need(f: Record<string, string>, name: string): string {
  if (!f[name]) throw new UsageError(`--${name} is required`);
  return f[name];
}

function amount(raw: string, name: string, min = 0): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number >= ${min}`);
  return n;
}

const publicUser = (u: { _id: string; email: string; balance: number; status: string; sessionLimit: number; activeSessions: number }) => ({
  userId: u._id,
  email: u.email,
  balance: u.balance,
  status: u.status,
  sessionLimit: u.sessionLimit,
  activeSessions: u.activeSessions,
});

async function run(store: Store, defaultLimit: number, [group, cmd, ...rest]: string[]): Promise<unknown> {
  const f = flags(rest);
  const userOr404 = async (id: string) => {
    const u = await store.users.get(id);
    if (!u) throw new UsageError(`no user ${id}`);
    return u;
  };
  switch (`${group} ${cmd}`) {
    case 'users create': {
      const email = need(f, 'email');
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError('--email must be an email address');
      const user = await store.users.create(email, amount(f.balance ?? '0', 'balance'), Math.floor(amount(f['session-limit'] ?? String(defaultLimit), 'session-limit', 1)));
      const { key } = await store.apiKeys.create(user._id);
      return { userId: user._id, apiKey: key };
    }
    case 'users list':
      return { users: (await store.users.list()).map(publicUser) };
    case 'users topup': {
      const u = await store.users.topUp(need(f, 'user'), amount(need(f, 'amount'), 'amount', -1e9));
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'users deactivate':
    case 'users activate': {
      const u = await store.users.setStatus(need(f, 'user'), cmd === 'activate' ? 'active' : 'deactivated');
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'users set-limit': {
      const u = await store.users.setSessionLimit(need(f, 'user'), Math.floor(amount(need(f, 'limit'), 'limit', 1)));
      if (!u) throw new UsageError(`no user ${f.user}`);
      return publicUser(u);
    }
    case 'keys create': {
      const u = await userOr404(need(f, 'user'));
      const { key, record } = await store.apiKeys.create(u._id);
      return { userId: u._id, keyId: record._id, apiKey: key };
    }
    case 'keys revoke': {
      const revoked = await store.apiKeys.revoke(need(f, 'key'));
      if (!revoked) throw new UsageError('no such live key');
      return { revoked: true };
    }
    case 'keys list': {
      const u = await userOr404(need(f, 'user'));
      return { keys: (await store.apiKeys.listForUser(u._id)).map((k) => ({ keyId: k._id, prefix: k.prefix, createdAt: k.createdAt, revokedAt: k.revokedAt })) };
    }
    default:
      throw new UsageError(`unknown command "${[group, cmd].filter(Boolean).join(' ')}"; see src/cli/admin.ts`);
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

void main();
