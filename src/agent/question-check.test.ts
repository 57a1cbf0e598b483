import { heldQuestion } from './question-check';
import { TaskSecrets } from './secrets/secrets';

const ask = (value: string, type = 'human_input_needed') => ({ type, value });

describe('a question to the human', () => {
  it.each([
    "Please click on the 'Oak Rocking Chair' link to get the price.",
    'Please extract the names and cities from the visible text.',
    'Please select the cheapest product in the Garden category.',
    'Please provide the monthly price of the Gold plan from the page.',
    'Could you open the second page of results?',
    'Please wait for the page to load before proceeding.',
  ])('is held when it asks for what a tool does or the page shows: %s', (value) => {
    expect(heldQuestion(ask(value), undefined, false)).toMatch(/^Not asked: this is for you to do: press, type and choose with the tools, and to answer with what the page shows, call done with it\. A human is asked only for/);
  });

  it.each([
    'Please enter the 6-digit confirmation code sent to your phone.',
    'What is the confirmation code sent to your phone?',
    'Please solve the CAPTCHA.',
    'May I pay 40 EUR for the express delivery?',
  ])('goes to the human when only they can answer: %s', (value) => {
    expect(heldQuestion(ask(value), undefined, false)).toBeUndefined();
  });

  it('asking for credentials is held when the secrets hold them, and names them', () => {
    const secrets = new TaskSecrets([{ match: 'all', fields: { username: 'ada', password: 'pw-12345678' } }]);
    expect(heldQuestion(ask('Sign in with the username and password', 'credentials'), secrets, false)).toBe(
      'Not asked: your secrets hold <secret>username</secret>, <secret>password</secret>: type them with input_text. A human is asked only for what neither the pages nor the task give you (a code sent to their phone, a CAPTCHA, an approval). If that is still what you need, call request_human_input again.',
    );
    expect(heldQuestion(ask('Sign in with the username and password', 'credentials'), undefined, false)).toBeUndefined();
  });

  it('asking a human to sign in is held when the secrets hold credentials, whatever the question type, and goes to the human when they hold none', () => {
    const secrets = new TaskSecrets([{ match: 'all', fields: { username: 'ada', password: 'pw-12345678' } }]);
    const question = ask('Please sign in with the username and password from your secrets.');
    expect(heldQuestion(question, secrets, false)).toMatch(/^Not asked: your secrets hold <secret>username<\/secret>, <secret>password<\/secret>: type them with input_text\./);
    expect(heldQuestion(ask('Please log in to your account so I can go on.'), secrets, false)).toMatch(/^Not asked: your secrets hold/);
    expect(heldQuestion(question, undefined, false)).toBeUndefined();
    expect(heldQuestion(ask('Please enter the 6-digit code sent to your phone.'), secrets, false)).toBeUndefined();
    expect(heldQuestion(ask('Please give me the one-time password to log in.'), secrets, false)).toBeUndefined();
  });

  it('asking for credentials on a page without a password field is held when the secrets hold none', () => {
    const question = ask('Please enter your credentials to access the search results page.', 'credentials');
    expect(heldQuestion(question, undefined, false, false)).toMatch(/^Not asked: this page asks for no credentials \(it has no password field\); to answer with what the page shows, call done with it\. A human is asked only for/);
    expect(heldQuestion(question, undefined, false, true)).toBeUndefined();
    expect(heldQuestion(question, undefined, true, false)).toBeUndefined();
  });

  it('is held once per task: asked again, it goes to the human', () => {
    expect(heldQuestion(ask('Please click the Next button.'), undefined, true)).toBeUndefined();
  });
});
