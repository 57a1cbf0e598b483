import { composeObservation, estimateTokens, type ComposeInput } from './compose';

const base = (over: Partial<ComposeInput> = {}): ComposeInput => ({
  url: 'http://x/page',
  title: 'Page',
  tabs: [{ index: 0, url: 'http://x/page', title: 'Page', active: true }],
  viewport: { width: 1024, height: 600, scrollY: 0, scrollHeight: 600 },
  modal: null,
  blockedByModal: 0,
  elements: [],
  farAway: { above: 0, below: 0, side: 0 },
  text: [],
  textAbove: 0,
  textBelow: 0,
  ...over,
});
const el = (i: number, position: 'in' | 'above' | 'below' | 'side' = 'in', distance = 0) => ({ line: `[${i}] button "Button number ${i}"`, position, distance });

describe('composeObservation', () => {
  it('lays out header, elements and text', () => {
    const text = composeObservation(base({ elements: [el(1), el(2)], text: ['Hello', 'World'] }), 1000);
    expect(text).toBe(
      ['URL: http://x/page', 'Title: Page', 'Tabs: [0] Page (active)', 'Interactive elements:', '[1] button "Button number 1"', '[2] button "Button number 2"', 'Visible text:', 'Hello', 'World', '(this is the whole page)'].join('\n'),
    );
  });

  it("leaves out text lines an element listed shows as its label, and says so when nothing else is left", () => {
    const form = base({ elements: [{ line: '[1] textbox "Name" value="Ada"', position: 'in', distance: 0 }, { line: '[2] button "Send"', position: 'in', distance: 0 }], text: ['Contact us', 'Name', 'Send', 'Send us a note'] });
    expect(composeObservation(form, 1000)).toMatch(/Visible text:\nContact us\nSend us a note\n\(this is the whole page\)$/);
    expect(composeObservation({ ...form, text: ['Name', 'Send'] }, 1000)).toMatch(/Visible text:\n\(only the labels of the elements above\)\n/);
    expect(composeObservation({ ...form, text: [] }, 1000)).toMatch(/Visible text:\n\(none\)\n/);
  });

  it('lists nearby off-screen elements when there is room, and counts the rest', () => {
    const input = base({
      viewport: { width: 1024, height: 600, scrollY: 600, scrollHeight: 5000 },
      elements: [el(1, 'above', 100), el(2), el(3, 'below', 10), el(4, 'below', 5000)],
      farAway: { above: 2, below: 30, side: 0 },
      textBelow: 1234,
    });
    const text = composeObservation(input, 1000);
    expect(text).toContain('Scroll: 600px of 5000px page height (viewport 1024x600)');
    expect(text).toContain('Above the viewport:\n[1] button "Button number 1"\nBelow the viewport:\n[3] button "Button number 3"');
    expect(text).not.toContain('[4]');
    expect(text).toContain('... 2 more interactive elements above the viewport (scroll up to see them)');
    expect(text).toContain('... 31 more interactive elements below the viewport (scroll down to see them)');
    expect(text).toContain('(about 1234 more characters of text below the viewport: scroll down or use extract to read them)');
    expect(text).not.toContain('whole page');
  });

  it('says it is the whole page only when nothing is off screen, left out or cut, and no area scrolls', () => {
    const whole = base({ elements: [el(1)], text: ['Hello'] });
    expect(composeObservation(whole, 1000)).toMatch(/\(this is the whole page\)$/);
    expect(composeObservation({ ...whole, paneScrolls: true }, 1000)).not.toContain('whole page');
    expect(composeObservation({ ...whole, farAway: { above: 0, below: 0, side: 1 } }, 1000)).not.toContain('whole page');
    expect(composeObservation({ ...whole, textBelow: 10 }, 1000)).not.toContain('whole page');
    expect(composeObservation({ ...whole, text: ['A long line of text that will not fit. '.repeat(20)] }, 60)).not.toContain('whole page');
    expect(composeObservation({ ...whole, elements: [el(1), el(2), el(3), el(4), el(5), el(6)] }, 40)).not.toContain('whole page');
  });

  it('drops off-screen elements first, then text, then elements in view, by whole lines', () => {
    const input = base({
      elements: [...Array.from({ length: 20 }, (_, i) => el(i + 1)), ...Array.from({ length: 50 }, (_, i) => el(i + 21, 'below', i * 10))],
      text: Array.from({ length: 50 }, (_, i) => `Paragraph ${i} with some words in it to read`),
    });
    for (const budget of [2000, 400, 250, 120, 60]) {
      const text = composeObservation(input, budget);
      expect(estimateTokens(text)).toBeLessThanOrEqual(budget);
      for (const line of text.split('\n')) {
        expect(/^\[\d+\] button "Button number \d+"$|^[A-Z(.]|^Paragraph \d+ with some words in it to read$|…$/.test(line)).toBe(true);
      }
    }
    const roomy = composeObservation(input, 2000);
    expect(roomy).toContain('Below the viewport:');
    const tight = composeObservation(input, 400);
    expect(tight).toContain('[20] button');
    expect(tight).not.toContain('[21] button');
    expect(tight).toContain('... 50 more interactive elements below the viewport');
    expect(tight).toContain('(visible text truncated)');
    const tiny = composeObservation(input, 120);
    expect(tiny).toMatch(/more interactive elements? in the viewport not listed/);
  });

  it('says when a modal dialog hides the rest of the page', () => {
    const text = composeObservation(base({ modal: 'Please confirm', blockedByModal: 3, elements: [el(7)] }), 1000);
    expect(text).toContain('A modal dialog is open ("Please confirm"): only its elements are listed; 3 elements behind it cannot be used until it is closed.');
  });

  it("shows the text below the viewport when it is all there and fits, in place of the note that counts it", () => {
    const input = base({
      viewport: { width: 1024, height: 600, scrollY: 0, scrollHeight: 1100 },
      elements: [el(1), { line: '[2] link "Fennec X1"', position: 'below', distance: 300 }],
      text: ['Fennec X2', 'Specifications'],
      textBelow: 60,
      textBelowLines: ['Weight (body only) | 412 g', 'Weight (with battery and card) | 468 g', 'Fennec X1'],
    });
    expect(composeObservation(input, 1000)).toMatch(
      /\nVisible text:\nFennec X2\nSpecifications\nThe rest of the page's text \(below the viewport\):\nWeight \(body only\) \| 412 g\nWeight \(with battery and card\) \| 468 g$/,
    );
    // no room for all of it: counted, as before
    const long = { ...input, textBelow: 400, textBelowLines: [...input.textBelowLines!, 'In the box: '.padEnd(300, 'strap, cable, ')] };
    const tight = composeObservation(long, estimateTokens(composeObservation({ ...long, textBelowLines: [] }, 1000)) + 50);
    expect(tight).not.toContain("The rest of the page's text");
    expect(tight).toContain('Specifications\n(about 400 more characters of text below the viewport: scroll down or use extract to read them)');
    // none gathered (the page goes on further): counted
    expect(composeObservation({ ...input, textBelowLines: [] }, 1000)).toContain('(about 60 more characters of text below the viewport');
  });
});
