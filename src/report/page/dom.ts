/**
 * Building the page's elements. Text only ever goes in through text nodes, so function and span
 * names cannot inject markup.
 */

/** The element with this data-testid (the hooks tests use are the page's own handles too). */
export const byTestId = <T extends HTMLElement = HTMLElement>(id: string): T => document.querySelector<T>(`[data-testid="${id}"]`)!;

type Attributes = Record<string, string | number | undefined>;

/** An element with these attributes (undefined ones left out) and children (text as text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: (Node | string)[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value !== undefined) node.setAttribute(key, String(value));
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(child));
  return node;
}

export const numCell = (text: string): HTMLTableCellElement => el('td', { class: 'num' }, text);

/** `action` on a click, and on Enter or Space for a keyboard user who reached the element with Tab. */
export function onActivate(node: HTMLElement, action: () => void): void {
  node.addEventListener('click', () => action());
  node.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      action();
    }
  });
}
