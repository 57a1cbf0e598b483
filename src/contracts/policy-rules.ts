/** Automation policies as they are stored and sent: the rules and domain rules a user writes. */
import type { SensitiveDataSpec } from './detectors';

export type RuleEffect = 'allow' | 'block' | 'approve';
export type DomainMode = 'allow_all' | 'allowlist' | 'blocklist';

export interface PolicyRule {
  effect: RuleEffect;
  actionTypes?: string[];
  keywords?: string[];
  urlPatterns?: string[];
  sensitiveData?: SensitiveDataSpec[];
}

/** What the agent needs of a stored policy. */
export interface PolicyDocument {
  _id: string;
  name: string;
  llmRole?: string | null;
  domainRules: { mode: DomainMode; domains: string[] };
  rules: PolicyRule[];
}

export interface PolicyRecord extends PolicyDocument {
  userId: string;
  description: string;
  llmRole: string | null;
  domainRules: { mode: DomainMode; domains: string[] };
  rules: PolicyRule[];
  /** The record's place among the user's limit (unique per user: the limit holds under concurrency). */
  slot: number;
  createdAt: Date;
  updatedAt: Date;
}

export type PolicyFields = Pick<PolicyRecord, 'name' | 'description' | 'llmRole' | 'domainRules' | 'rules'>;

/**
 * Policies. The per-user limit rests on a unique (userId, slot) index, since FerretDB
 * holds nothing between a count and an insert (see doc-locks.ts).
 */
