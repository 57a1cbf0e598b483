import { namedFields, refusedNote } from './refused-form';

describe('the fields a form was refused for', () => {
  it('are named with their index, label and reason; one field is "it", several "them"', () => {
    const email = { index: 2, label: 'Email', reason: 'not an e-mail address' };
    const code = { index: null, label: 'Code', reason: 'required, empty' };
    expect(refusedNote([email], '[4]')).toBe('; the form was not sent: the browser refused [2] "Email" (not an e-mail address). Correct it, then press [4] again');
    expect(namedFields([email, code, { ...email, index: 5, label: 'Phone', reason: 'at least 7 characters' }])).toBe(
      '[2] "Email" (not an e-mail address), "Code" (required, empty) and [5] "Phone" (at least 7 characters)',
    );
  });

  it('add nothing when the browser refused none', () => {
    expect(refusedNote([], '[4]')).toBe('');
    expect(namedFields([])).toBe('');
  });
});
