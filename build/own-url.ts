/**
 * A module's `import.meta.url` kept when it is bundled: every occurrence in its source becomes its
 * compiled file's URL, resolved from the bundle's (`relativeFile`: that file's path from the
 * bundle's folder, with the platform's separators). Pure, for preload-bundle.ts.
 */
export function keepOwnUrl(text: string, relativeFile: string): string {
  const posix = relativeFile.split(/[\\/]/).join('/');
  const relative = posix.startsWith('../') ? posix : `./${posix}`;
  return text.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`);
}
