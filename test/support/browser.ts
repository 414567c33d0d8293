import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

/** Debian's Chromium, installed by .ci/run; CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium with a fresh profile and the flags this machine needs (no background
 * networking: the closed network refuses it). Throws without Chromium: the tests that call it
 * skip first where it is missing (support/installed.ts), except under CI=true.
 */
export async function launchBrowser(profileDir: string): Promise<BrowserContext> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or point CHROMIUM_PATH at a Chromium binary`);
  }
  return chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
}

export interface Opened {
  page: Page;
  requests: string[];
  errors: string[];
}

/** A new tab on the report, with every request and console error recorded from the start. */
export async function openReport(context: BrowserContext | undefined, url: string): Promise<Opened> {
  assert.ok(context, 'browser not started');
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  return { page, requests, errors };
}

/** The test compiles without DOM types; this is the part of an element it reads in the page. */
type WithDataset = { dataset: Record<string, string | undefined> };

export interface Frame {
  name: string;
  total: number;
  self: number;
  depth: number;
  ancestor: boolean;
  match: boolean;
}

/** The frames the flame graph draws now, as the page describes them in data attributes. */
export function frames(page: Page): Promise<Frame[]> {
  return page.$$eval('[data-testid="flame-frame"]', (elements) =>
    elements.map((element) => {
      const data = (element as unknown as WithDataset).dataset;
      return {
        name: data.name ?? '',
        total: Number(data.total),
        self: Number(data.self),
        depth: Number(data.depth),
        ancestor: data.ancestor === 'true',
        match: data.match === 'true',
      };
    }),
  );
}
