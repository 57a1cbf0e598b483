import { activeSecrets, keptPrevious, MAX_PREVIOUS_SECRETS, type WebhookSecretRecord } from './webhook-secrets.repository';

const NOW = Date.parse('2026-11-23T10:00:00Z');
const at = (hours: number) => new Date(NOW + hours * 3_600_000);

describe('replaced webhook secrets', () => {
  it('keep signing for their 24 hours, at most three of them, the newest first', () => {
    const previous = [
      { secret: 'p1', expiresAt: at(23) },
      { secret: 'p2', expiresAt: at(20) },
      { secret: 'expired', expiresAt: at(-1) },
      { secret: 'p3', expiresAt: at(10) },
      { secret: 'p4', expiresAt: at(5) },
      { secret: 'p5', expiresAt: at(1) },
    ];
    expect(MAX_PREVIOUS_SECRETS).toBe(3);
    expect(keptPrevious(previous, NOW).map((p) => p.secret)).toEqual(['p1', 'p2', 'p3']);
    const record: WebhookSecretRecord = { _id: 'usr_1', secret: 'current', createdAt: at(0), previous, rotatedAt: at(0) };
    expect(activeSecrets(record, NOW)).toEqual(['current', 'p1', 'p2', 'p3']);
    expect(activeSecrets(record, at(21).getTime())).toEqual(['current', 'p1']);
  });
});
