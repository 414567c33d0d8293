/**
 * A module's `import.meta.url` kept when it is bundled: every occurrence in its text becomes its
 * own file's URL, resolved from the bundle's (`relativeFile`: the module's path from the bundle's
 * folder, with the platform's separators). Pure, for preload-bundle.ts.
 */
export function keepOwnUrl(text: string, relativeFile: string): string {
  const relative = `./${relativeFile.split(/[\\/]/).join('/')}`;
  return text.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`);
}
