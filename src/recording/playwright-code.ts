/**
 * The pieces of code the exported Playwright test is written with. Every string from a
 * recording comes from pages and models, so literals are written with JSON.stringify.
 * Secret placeholders (`<secret>name</secret>`) become reads of environment variables
 * (SECRET_<NAME>), files to upload reads of FILE_<ID>.
 */
import { ARIA_ROLES, type ElementDescription } from '../contracts/recording';

/** A value as a TypeScript literal. */
export const lit = (v: unknown) => JSON.stringify(v);

/** SECRET_<NAME>: the placeholder's name upper-cased, anything else than letters and digits as _. */
export function envName(secret: string): string {
  return `SECRET_${secret.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** FILE_<ID>: the environment variable holding the path of a file to upload. */
export function fileEnvName(fileId: string): string {
  return `FILE_${fileId.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

const PLACEHOLDER = /<secret>([A-Za-z][A-Za-z0-9_.-]{0,63})<\/secret>/g;

/** A typed text as a TypeScript expression: a plain literal, or a template reading the secrets it names (added to `secrets`). */
export function textExpr(text: string, secrets: Set<string>): string {
  if (!PLACEHOLDER.test(text)) return lit(text);
  PLACEHOLDER.lastIndex = 0;
  const parts: string[] = [];
  let last = 0;
  for (const m of text.matchAll(PLACEHOLDER)) {
    if (m.index! > last) parts.push(lit(text.slice(last, m.index)));
    secrets.add(m[1]);
    parts.push(`env(${lit(envName(m[1]))})`);
    last = m.index! + m[0].length;
  }
  if (last < text.length) parts.push(lit(text.slice(last)));
  return parts.join(' + ');
}

/** The most telling locator of an element: role and name, label, placeholder, test id, text, the CSS path. */
export function locatorExpr(el: ElementDescription): string {
  const root = el.frame ? `page.frameLocator(${lit(el.frame.name ? `iframe[name=${JSON.stringify(el.frame.name)}]` : `iframe[src=${JSON.stringify(el.frame.url)}]`)})` : 'page';
  if (el.testId) return `${root}.getByTestId(${lit(el.testId)})`;
  if (el.name && ARIA_ROLES.has(el.role)) return `${root}.getByRole(${lit(el.role)}, { name: ${lit(el.name)}, exact: true })`;
  if (el.label) return `${root}.getByLabel(${lit(el.label)}, { exact: true })`;
  if (el.placeholder) return `${root}.getByPlaceholder(${lit(el.placeholder)}, { exact: true })`;
  if (el.id) return `${root}.locator(${lit(`[id=${JSON.stringify(el.id)}]`)})`;
  if (el.fieldName) return `${root}.locator(${lit(`${el.tag.toLowerCase()}[name=${JSON.stringify(el.fieldName)}]`)})`;
  if (el.text && el.text.length <= 80) return `${root}.getByText(${lit(el.text)}, { exact: true })`;
  return `${root}.locator(${lit(el.css)})`;
}
