import { askedGivenValues, asksForTask, heldQuestion } from './question-check';
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
    expect(heldQuestion(ask(value), undefined, 0)).toMatch(/^Not asked: this is for you to do: press, type and choose with the tools, and to answer with what the page shows, call done with it\. A human is asked only for/);
  });

  it('is held when it asks for what the task itself asks', () => {
    const task = 'List every person in the team directory with their name and city.';
    const question = 'Please provide the names and cities of the people in the team directory.';
    expect(asksForTask(question, task)).toBe(true);
    expect(heldQuestion(ask(question), undefined, 0, true, task)).toMatch(/^Not asked: this is for you to do: press, type and choose/);
    // fewer than three of its words, a task that tells to ask, what only a human gives: asked
    expect(asksForTask('Which of the two flights do you prefer, 8:00 or 9:30?', 'Book the cheapest flight to Paris.')).toBe(false);
    expect(asksForTask('Please provide the names and cities of the team directory.', 'List the team directory with names and cities; ask me which ones to keep.')).toBe(false);
    expect(asksForTask('Please enter the code sent to the team directory admin phone.', 'Sign in to the team directory admin with the phone code.')).toBe(false);
  });

  it.each([
    'Please enter the 6-digit confirmation code sent to your phone.',
    'What is the confirmation code sent to your phone?',
    'Please solve the CAPTCHA.',
    'May I pay 40 EUR for the express delivery?',
  ])('goes to the human when only they can answer: %s', (value) => {
    expect(heldQuestion(ask(value), undefined, 0)).toBeUndefined();
  });

  it('asking for credentials is held when the secrets hold them, and names them', () => {
    const secrets = new TaskSecrets([{ match: 'all', fields: { username: 'ada', password: 'pw-12345678' } }]);
    expect(heldQuestion(ask('Sign in with the username and password', 'credentials'), secrets, 0)).toBe(
      'Not asked: your secrets hold <secret>username</secret>, <secret>password</secret>: type them with input_text. A human is asked only for what neither the pages nor the task give you (a code sent to their phone, a CAPTCHA, an approval). If that is still what you need, call request_human_input again.',
    );
    expect(heldQuestion(ask('Sign in with the username and password', 'credentials'), undefined, 0)).toBeUndefined();
  });

  it('asking a human to sign in is held when the secrets hold credentials, whatever the question type, and goes to the human when they hold none', () => {
    const secrets = new TaskSecrets([{ match: 'all', fields: { username: 'ada', password: 'pw-12345678' } }]);
    const question = ask('Please sign in with the username and password from your secrets.');
    expect(heldQuestion(question, secrets, 0)).toMatch(/^Not asked: your secrets hold <secret>username<\/secret>, <secret>password<\/secret>: type them with input_text\./);
    expect(heldQuestion(ask('Please log in to your account so I can go on.'), secrets, 0)).toMatch(/^Not asked: your secrets hold/);
    expect(heldQuestion(question, undefined, 0)).toBeUndefined();
    expect(heldQuestion(ask('Please enter the 6-digit code sent to your phone.'), secrets, 0)).toBeUndefined();
    expect(heldQuestion(ask('Please give me the one-time password to log in.'), secrets, 0)).toBeUndefined();
    expect(heldQuestion(ask('Please provide the card number and PIN.'), secrets, 0)).toMatch(/^Not asked: your secrets hold/);
    expect(heldQuestion(ask('Please enter the PIN texted to your phone.'), secrets, 0)).toBeUndefined();
    expect(heldQuestion(ask('Please provide the card number and PIN.'), undefined, 0)).toBeUndefined();
  });

  it('asking for credentials on a page without a password field is held when the secrets hold none', () => {
    const question = ask('Please enter your credentials to access the search results page.', 'credentials');
    expect(heldQuestion(question, undefined, 0, false)).toMatch(/^Not asked: this page asks for no credentials \(it has no password field\); to answer with what the page shows, call done with it\. A human is asked only for/);
    expect(heldQuestion(question, undefined, 0, true)).toBeUndefined();
    expect(heldQuestion(question, undefined, 1, false)).toBeUndefined();
  });

  it('the agent\'s own work is held twice, the second time with no offer to ask again; a third question goes to the human', () => {
    const press = ask('Please click the Next button.');
    expect(heldQuestion(press, undefined, 1)).toBe(
      'Not asked again: this is for you to do: press, type and choose with the tools, and to answer with what the page shows, call done with it. The task is yours to finish with the tools: where a page lacks what it needs, go back or open the page that has it.',
    );
    expect(heldQuestion(press, undefined, 2)).toBeUndefined();
    // what only a human gives is held once at most, whatever it starts with
    expect(heldQuestion(ask('Please check your phone and give me the code.'), undefined, 0)).toMatch(/^Not asked: this is for you to do/);
    expect(heldQuestion(ask('Please check your phone and give me the code.'), undefined, 1)).toBeUndefined();
    const secrets = new TaskSecrets([{ match: 'all', fields: { username: 'ada', password: 'pw-12345678' } }]);
    expect(heldQuestion(ask('Please log in for me.'), secrets, 1)).toMatch(/^Not asked again: your secrets hold <secret>username<\/secret>, <secret>password<\/secret>: type them with input_text\. The task is yours/);
    expect(heldQuestion(ask('Please log in for me.'), secrets, 2)).toBeUndefined();
  });

  it('asking for a value the task gives is held, and names the value', () => {
    const prompt = 'Ask for a callback to the phone number 555-0100, with the e-mail ann@example.com.';
    expect(heldQuestion(ask('Please provide your phone number.'), undefined, 0, true, prompt)).toBe(
      'Not asked: the task gives it: "555-0100"; type it with input_text. A human is asked only for what neither the pages nor the task give you (a code sent to their phone, a CAPTCHA, an approval). If that is still what you need, call request_human_input again.',
    );
    expect(heldQuestion(ask('Please call me back at the phone number 555-0100.'), undefined, 0, true, prompt, ['555 0100'])).toMatch(/^Not asked: the task gives it: "555-0100"; you typed it already: send the form it is in with its button\. /);
    // typed and the form sent: not told to send it again
    expect(heldQuestion(ask('Please call me back at the phone number 555-0100.'), undefined, 0, true, prompt, ['555 0100'], false, true)).toMatch(/^Not asked: the task gives it: "555-0100"; you typed it, and the form was sent already: this page is what it opened; if the task asks for nothing more, call done\. /);
    expect(askedGivenValues('What e-mail address should the callback go to?', prompt)).toEqual(['ann@example.com']);
    expect(askedGivenValues('Which phone numbers and mail should I use?', prompt)).toEqual([]);
    expect(askedGivenValues('Please give me your phone numbers and mail.', prompt)).toEqual(['ann@example.com', '555-0100']);
  });

  it('asking for what the task does not give, or what only a human gives, goes to the human', () => {
    const prompt = 'Ask for a callback to the phone number 555-0100.';
    expect(heldQuestion(ask('Please provide your postal address.'), undefined, 0, true, prompt)).toBeUndefined();
    expect(heldQuestion(ask('Please enter the code sent to your phone number.'), undefined, 0, true, prompt)).toBeUndefined();
    expect(heldQuestion(ask('May I send the callback request to your phone number?'), undefined, 0, true, prompt)).toBeUndefined();
    expect(heldQuestion(ask('Please provide your phone number.'), undefined, 0, true, 'Ask for a callback to my phone.')).toBeUndefined();
    // a value the task gives: held a second time, then asked
    expect(heldQuestion(ask('Please provide your phone number.'), undefined, 1, true, prompt)).toMatch(/^Not asked again: the task gives it: "555-0100"/);
    expect(heldQuestion(ask('Please provide your phone number.'), undefined, 2, true, prompt)).toBeUndefined();
  });

  it('asked before any action of the task is held once, unless only a human gives it, it is a sign-in, or the task says to ask', () => {
    const prompt = 'A reviewer called Helga K. was unhappy with the Ironclad skillet. What was her complaint?';
    const first = (question: string, task = prompt, type = 'human_input_needed') => heldQuestion(ask(question, type), undefined, 0, true, task, [], true);
    expect(first('Please provide more information about her review.')).toBe(
      'Not asked: you have not tried the page yet: read it, scroll, press, type and choose with the tools first, and to answer with what the page shows, call done with it. A human is asked only for what neither the pages nor the task give you (a code sent to their phone, a CAPTCHA, an approval). If that is still what you need, call request_human_input again.',
    );
    expect(heldQuestion(ask('Please provide more information about her review.'), undefined, 0, true, prompt, [], false)).toBeUndefined();
    expect(heldQuestion(ask('Please provide more information about her review.'), undefined, 1, true, prompt, [], true)).toBeUndefined();
    expect(first('Please enter the 6-digit code sent to your phone.')).toBeUndefined();
    expect(first('Please sign in to your account.')).toBeUndefined();
    expect(first('Your username, please.', prompt, 'credentials')).toBeUndefined();
    expect(first('Which of the two skillets do you mean?', 'Ask me which skillet I mean, then tell me its price.')).toBeUndefined();
  });
});
