// A pyro-run checkout's main-thread preload, the file its package.json `./register` export names:
// a baseline checkout may be a build that writes it elsewhere than this one does.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export function registerPathOf(checkout) {
  const manifest = JSON.parse(readFileSync(path.join(checkout, 'package.json'), 'utf8'));
  return path.resolve(checkout, manifest.exports['./register'].import);
}
