import { z } from 'zod';
import { elementFacts, httpAddress, sentIn } from '../policy/action-facts';
import type { AgentTool } from '../types';
import { abortable } from './abort';
import { attempt } from './action-error';
import { ACTION_TIMEOUT_MS, targetElement } from './element-target';
import { elementIndex } from './fields';
import { actAndSettle, outcomeNote } from './navigation-watch';
import { clickAt } from './plain-click';
import { formPressAfter, plainFormButton } from './form-button';
import { refusedFields, refusedNote } from './refused-form';

const schema = z.object({ index: elementIndex() });

export const clickElementTool: AgentTool<typeof schema, 'click_element'> = {
  name: 'click_element',
  description: 'Click an interactive element (link, button, checkbox, tab, ...) by its [index]. A link that opens a new tab makes it the active tab.',
  schema,
  async execute(ctx, { index }) {
    const { locator, frame, info, target, name, point } = await targetElement(ctx, index, { clickPoint: true });
    const urlBefore = ctx.page.url();
    const formButton = frame === ctx.page.mainFrame() && (await abortable(plainFormButton(locator), ctx.signal));
    // Plainly clickable: the mouse clicks the centre of its box, without Playwright's checks;
    // else the locator's checked click, which waits and says what stands in the way (plain-click.ts).
    // noWaitAfter: a slow navigation must not turn a successful click into a timeout; actAndSettle waits for it.
    const outcome = await attempt(ctx.signal, `Clicking ${name}`, () =>
      actAndSettle(ctx, () => abortable(point ? clickAt(frame, point) : locator.click({ timeout: ACTION_TIMEOUT_MS, noWaitAfter: true }), ctx.signal)),
    );
    const hint = info.tag === 'SELECT' ? ' (to choose an option of a select, use select_option)' : '';
    // A submit press that led nowhere: the browser's check of the form's fields may have stopped it.
    const stayed = !outcome.navigated && !outcome.newPage && (info.tag === 'BUTTON' || info.tag === 'INPUT');
    const refused = stayed ? refusedNote(await refusedFields(frame, index, ctx.signal), `[${index}]`) : '';
    const formPress = formButton && stayed ? await abortable(formPressAfter(locator), ctx.signal) : undefined;
    return { summary: `Clicked ${name}${outcomeNote(ctx, urlBefore, outcome)}${refused}${hint}`, target, ...(formPress ? { formPress } : {}) };
  },
  // The element's text, the link it follows, the values of the form it submits.
  async policyFacts(request) {
    const el = await elementFacts(request);
    if (!el) return {};
    return { texts: el.text ? [el.text] : [], targetUrl: httpAddress(el.href), data: [...(el.href ? sentIn(el.href) : []), ...el.submits] };
  },
  recording: { index: 'element' },
  playwright: (_args, { on }) => (on ? [`await ${on}.click();`] : []),
};
