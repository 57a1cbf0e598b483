import { NAMED_KEYS } from '../../contracts/schemas/message.schema';
import { keyInput, toContractPoint } from './input-mapping';
import { renderViewPage } from './view-page';

describe('pointer positions on the live screen', () => {
  it('follows the contract formula when the picture fills its box', () => {
    const box = { left: 0, top: 0, width: 512, height: 300 };
    expect(toContractPoint(0, 0, box)).toEqual({ x: 0, y: 155 });
    expect(toContractPoint(512, 300, box)).toEqual({ x: 1024, y: 755 });
    expect(toContractPoint(100, 75, box)).toEqual({ x: 200, y: 150 + 155 });
    expect(toContractPoint(100.4, 75.3, box)).toEqual({ x: Math.round((100.4 / 512) * 1024), y: Math.round((75.3 / 300) * 600) + 155 });
  });

  it('measures from the picture, not from the letterbox bars around it', () => {
    // 1000 x 300 box: the picture is 512 x 300, centred with 244 px bars left and right
    const wide = { left: 10, top: 20, width: 1000, height: 300 };
    expect(toContractPoint(10 + 244 + 256, 20 + 150, wide)).toEqual({ x: 512, y: 300 + 155 });
    expect(toContractPoint(10 + 100, 20 + 150, wide)).toBeNull();
    // 512 x 700 box: the picture is 512 x 300, with 200 px bars above and below
    const tall = { left: 0, top: 0, width: 512, height: 700 };
    expect(toContractPoint(0, 200, tall)).toEqual({ x: 0, y: 155 });
    expect(toContractPoint(256, 100, tall)).toBeNull();
  });

  it('gives nothing for a box without size', () => {
    expect(toContractPoint(1, 1, { left: 0, top: 0, width: 0, height: 0 })).toBeNull();
  });
});

describe('keys on the live screen', () => {
  it('types characters and presses named keys', () => {
    expect(keyInput({ key: 'a' }, NAMED_KEYS)).toEqual({ type: 'TYPE', text: 'a' });
    expect(keyInput({ key: ' ' }, NAMED_KEYS)).toEqual({ type: 'TYPE', text: ' ' });
    expect(keyInput({ key: 'é' }, NAMED_KEYS)).toEqual({ type: 'TYPE', text: 'é' });
    for (const key of NAMED_KEYS) expect(keyInput({ key }, NAMED_KEYS)).toEqual({ type: 'KEY_PRESS', key });
  });

  it('leaves shortcuts and keys without a counterpart to the viewer', () => {
    expect(keyInput({ key: 'c', ctrlKey: true }, NAMED_KEYS)).toBeNull();
    expect(keyInput({ key: 'r', metaKey: true }, NAMED_KEYS)).toBeNull();
    expect(keyInput({ key: 'Shift' }, NAMED_KEYS)).toBeNull();
    expect(keyInput({ key: 'F5' }, NAMED_KEYS)).toBeNull();
    // AltGr arrives as Ctrl + Alt and types characters
    expect(keyInput({ key: '@', ctrlKey: true, altKey: true }, NAMED_KEYS)).toEqual({ type: 'TYPE', text: '@' });
  });
});

describe('the view page', () => {
  const html = renderViewPage({ sessionId: 'abc123', token: 'tok-en_' });

  it('has the elements a viewer (and a test) drives, and no external assets', () => {
    for (const id of ['screen', 'takeover', 'log']) expect(html).toContain(`id="${id}"`);
    expect(html).toContain('/view/abc123/stream?token=tok-en_');
    expect(html).toContain('<script src="/socket.io/socket.io.js"></script>');
    expect(html).not.toMatch(/(src|href)="https?:/);
  });

  it('runs the same mapping code as the one tested here', () => {
    const script = html.slice(html.indexOf("'use strict';"));
    const pick = (name: string) => {
      const rest = script.slice(script.indexOf(`var ${name} = `) + `var ${name} = `.length);
      const end = /\}\s*;\s*\n\s*var /.exec(rest)!.index + 1;
      return new Function(`return (${rest.slice(0, end)});`)();
    };
    const inlinedPoint = pick('toContractPoint');
    expect(inlinedPoint(100, 75, { left: 0, top: 0, width: 512, height: 300 })).toEqual({ x: 200, y: 305 });
    const inlinedKey = pick('keyInput');
    expect(inlinedKey({ key: 'Enter' }, NAMED_KEYS)).toEqual({ type: 'KEY_PRESS', key: 'Enter' });
  });

  it('keeps session values from breaking out of the markup', () => {
    const evil = renderViewPage({ sessionId: '</script><b>x', token: '"><i>' });
    expect(evil).not.toContain('</script><b>x');
    expect(evil).not.toContain('"><i>');
  });
});
