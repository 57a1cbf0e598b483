/**
 * Automation policies, decided without a browser: what an action is (ActionFacts) goes in,
 * allow / block / approve comes out. Precedence: block > approve > allow; an action no rule
 * matches is allowed. Domain rules decide where the browser may go (navigations, links,
 * the starting URL).
 */
import { compileDetector, type Detector } from '../../contracts/detectors';
import type { DomainMode, PolicyDocument, RuleEffect } from '../../contracts/policy-rules';
import { formatHostPattern, hostMatches, parseHostPattern, urlHost, type HostPattern } from '../../contracts/host-patterns';
import { compileUrlPattern, matchesLowercased, MAX_MATCHED_URL, type UrlPattern } from '../../contracts/url-patterns';

/** One action as the policy sees it, before it is performed. */
export interface ActionFacts {
  /** The tool name (navigate, click_element, ...). */
  action: string;
  /** The page the action acts on. */
  pageUrl: string;
  /** Where the action would take the browser: navigate's URL, a link's address. */
  targetUrl?: string;
  /** What it acts on: the element's text, the option, the keys; searched for keywords. */
  texts: string[];
  /** What it would type or submit (secrets already in place); searched for keywords and sensitive data. */
  data: string[];
}

export interface PolicyDecision {
  effect: RuleEffect;
  /** Why, in a sentence the model and the human can read; empty when nothing matched. */
  reason: string;
  /** 1-based number of the deciding rule; absent for domain rules and the default. */
  rule?: number;
}

interface CompiledRule {
  number: number;
  effect: RuleEffect;
  actionTypes: Set<string>;
  keywords: string[];
  urlPatterns: UrlPattern[];
  detectors: Detector[];
}

const ALLOWED: PolicyDecision = { effect: 'allow', reason: '' };
const RANK: Record<RuleEffect, number> = { block: 3, approve: 2, allow: 1 };

export class CompiledPolicy {
  readonly id: string;
  readonly name: string;
  readonly llmRole: string | null;
  private readonly mode: DomainMode;
  private readonly domains: HostPattern[];
  private readonly rules: CompiledRule[];

  constructor(doc: PolicyDocument) {
    this.id = doc._id;
    this.name = doc.name;
    this.llmRole = doc.llmRole?.trim() || null;
    this.mode = doc.domainRules.mode;
    this.domains = doc.domainRules.domains.map(parseHostPattern).filter((pattern): pattern is HostPattern => typeof pattern !== 'string');
    this.rules = doc.rules.map((rule, index) => ({
      number: index + 1,
      effect: rule.effect,
      actionTypes: new Set(rule.actionTypes ?? []),
      keywords: (rule.keywords ?? []).map((keyword) => keyword.toLowerCase()).filter(Boolean),
      urlPatterns: (rule.urlPatterns ?? []).map(compileUrlPattern),
      detectors: (rule.sensitiveData ?? []).map(compileDetector),
    }));
  }

  /**
   * Whether deciding on this action needs the element's text and a form's values (read from
   * the page only then): a click may follow a link the domain rules judge; keywords and
   * detectors of rules that may cover the action read the page.
   */
  needsPageFacts(action: string): boolean {
    if (this.mode !== 'allow_all' && action === 'click_element') return true;
    return this.rules.some((rule) => (rule.keywords.length > 0 || rule.detectors.length > 0) && (rule.actionTypes.size === 0 || rule.actionTypes.has(action)));
  }

  /** Whether the domain rules restrict where the browser may go. */
  get restrictsDomains(): boolean {
    return this.mode !== 'allow_all';
  }

  /** The domain rules on one address; non-http(s) addresses (about:blank, data:) are not theirs to judge. */
  checkUrl(url: string): PolicyDecision {
    if (this.mode === 'allow_all') return ALLOWED;
    const target = urlHost(url);
    if (!target) return ALLOWED;
    const listed = this.domains.find((domain) => hostMatches(domain, target));
    if (this.mode === 'allowlist' && !listed) {
      return { effect: 'block', reason: `${target.host} is not among the domains the policy "${this.name}" allows (${this.domains.map(formatHostPattern).join(', ') || 'none'})` };
    }
    if (this.mode === 'blocklist' && listed) {
      return { effect: 'block', reason: `${target.host} is blocked by the policy "${this.name}" (${formatHostPattern(listed)})` };
    }
    return ALLOWED;
  }

  evaluate(facts: ActionFacts): PolicyDecision {
    if (facts.targetUrl) {
      const domain = this.checkUrl(facts.targetUrl);
      if (domain.effect === 'block') return domain;
    }
    let best: PolicyDecision = ALLOWED;
    let bestRank = 0;
    const urls = [facts.pageUrl, facts.targetUrl].filter((url): url is string => !!url).map((url) => url.toLowerCase());
    for (const rule of this.rules) {
      if (RANK[rule.effect] <= bestRank) continue;
      const matched = matchRule(rule, facts, urls);
      if (!matched) continue;
      best = { effect: rule.effect, rule: rule.number, reason: `rule ${rule.number} of the policy "${this.name}" (${rule.effect}) applies: ${matched.join(', ')}` };
      bestRank = RANK[rule.effect];
      if (rule.effect === 'block') break;
    }
    return best;
  }
}

/**
 * What made the rule match (for the reason), or null when it does not. Every condition given
 * must hold. `urls`: the action's page and target URLs, lowercased.
 */
function matchRule(rule: CompiledRule, facts: ActionFacts, urls: string[]): string[] | null {
  const why: string[] = [];
  if (rule.actionTypes.size) {
    if (!rule.actionTypes.has(facts.action)) return null;
    why.push(`the action is ${facts.action}`);
  }
  if (rule.keywords.length) {
    const haystack = [...facts.texts, ...facts.data].map((text) => text.toLowerCase());
    const keyword = rule.keywords.find((word) => haystack.some((text) => text.includes(word)));
    if (keyword === undefined) return null;
    why.push(`it mentions "${keyword}"`);
  }
  if (rule.urlPatterns.length) {
    // A URL too long to read is taken as matching a rule that restricts, never one that allows.
    const unread = urls.find((url) => url.length > MAX_MATCHED_URL);
    if (unread !== undefined) {
      if (rule.effect === 'allow') return null;
      why.push(`the URL is too long to check against its patterns (${unread.length} characters, at most ${MAX_MATCHED_URL})`);
    } else {
      const pattern = rule.urlPatterns.find((compiled) => urls.some((url) => matchesLowercased(compiled, url)));
      if (pattern === undefined) return null;
      why.push(`the URL matches "${pattern.source}"`);
    }
  }
  if (rule.detectors.length) {
    const found = rule.detectors.find((detector) => facts.data.some((text) => detector.find(text)));
    if (!found) return null;
    why.push(`what it would type or submit contains ${found.label}`);
  }
  if (!why.length) why.push('the rule has no conditions, so it covers every action');
  return why;
}
