import { errorOf } from '../../../test/support/errors';
import { parseCreatePolicy, parseUpdatePolicy } from './policy.schema';

describe('policy requests', () => {
  it('fills defaults and keeps only the conditions a rule gives', () => {
    expect(parseCreatePolicy({ name: ' Careful ', rules: [{ effect: 'block', actionTypes: ['navigate', 'navigate'], keywords: [] }] }, 50)).toEqual({
      name: 'Careful',
      description: '',
      llmRole: null,
      domainRules: { mode: 'allow_all', domains: [] },
      rules: [{ effect: 'block', actionTypes: ['navigate'] }],
    });
  });

  it('names the field at fault with the contract codes', () => {
    expect(errorOf(() => parseCreatePolicy({}, 50))).toMatchObject({ code: 'MISSING_REQUIRED_FIELD', details: { field: 'name' } });
    expect(errorOf(() => parseCreatePolicy({ name: 'p', rules: [{ effect: 'block', sensitiveData: [{ name: 'x', pattern: '(?=a)' }] }] }, 50))).toMatchObject({
      code: 'INVALID_PARAMETER',
      details: { parameter: 'rules.0.sensitiveData.0.pattern' },
    });
    expect(errorOf(() => parseCreatePolicy({ name: 'p', rules: [{ effect: 'block' }, { effect: 'allow' }] }, 1))).toMatchObject({
      code: 'INVALID_PARAMETER',
      message: 'A policy may have at most 1 rules',
      details: { parameter: 'rules', value: 2, max: 1 },
    });
    expect(errorOf(() => parseCreatePolicy({ name: 'p', domainRules: { mode: 'blocklist', domains: ['*bad*'] } }, 50))).toMatchObject({ details: { parameter: 'domainRules.domains.0' } });
  });

  it('updates only what is given', () => {
    expect(parseUpdatePolicy({ llmRole: '' }, 50)).toEqual({ llmRole: null });
    expect(parseUpdatePolicy({}, 50)).toEqual({});
    expect(errorOf(() => parseUpdatePolicy({ name: null }, 50))).toMatchObject({ code: 'MISSING_REQUIRED_FIELD' });
  });
});
