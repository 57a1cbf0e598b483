import { PAY_HELD, paysUnasked } from './pay-check';

const payment = ['URL: http://race.test/entered.html', 'Title: Payment – Harbour 10K 2027', 'Interactive elements:', '[1] button "Pay now"', '[2] link "Back to the entry"', 'Visible text:', 'Almost done'].join('\n');

describe('a press of a button that pays', () => {
  it('is held when the task asks for no payment or purchase', () => {
    expect(paysUnasked('Sign Ana Silva up for the Harbour 10K.', payment, 1)).toBe(
      `${PAY_HELD}: [1] button "Pay now", and the task asks for no payment or purchase. If the task is done, call done; if the task does need it, press [1] again.`,
    );
  });

  it('is not held when the task asks to pay, buy, order or book, nor for another element', () => {
    expect(paysUnasked('Sign Ana up for the Harbour 10K and pay the entry fee.', payment, 1)).toBeUndefined();
    expect(paysUnasked('Buy the green mug.', payment, 1)).toBeUndefined();
    expect(paysUnasked('Book a table for two.', payment, 1)).toBeUndefined();
    // a newsletter's "Subscribe" pays nothing
    expect(paysUnasked('Sign up for the newsletter with grace@example.com.', payment.replace('"Pay now"', '"Subscribe"'), 1)).toBeUndefined();
    expect(paysUnasked('Sign Ana Silva up for the Harbour 10K.', payment, 2)).toBeUndefined();
    // a button that leads on to the payment page pays nothing yet
    expect(paysUnasked('Sign Ana Silva up for the Harbour 10K.', payment.replace('"Pay now"', '"Continue to payment"'), 1)).toBeUndefined();
  });
});
