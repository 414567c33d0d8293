/**
 * The server path's hand-over of a response's close (src/tracing/response-close.ts): work given
 * for the request's own response runs once, in order, when it closes; anything else is left to the
 * caller's own listener; and the closed request's metadata no longer reaches its response.
 */
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { closingMetadata, onResponseClose, responseClosed } from '../../src/tracing/response-close.js';

const response = () => new ServerResponse(new IncomingMessage(new Socket()));

describe("a response's close, handed over to the server path", () => {
  it("runs the work given for the request's own response once, in the order given", () => {
    const res = response();
    const metadata = closingMetadata('http', {}, res);
    const ran: number[] = [];
    for (const n of [1, 2, 3])
      assert.equal(
        onResponseClose(metadata, res, () => ran.push(n)),
        true,
      );
    responseClosed(metadata);
    responseClosed(metadata);
    assert.deepEqual(ran, [1, 2, 3]);
  });

  it('declines another response, metadata of no server path, and a response already closed', () => {
    const res = response();
    const metadata = closingMetadata('http', {}, res);
    assert.equal(
      onResponseClose(metadata, response(), () => {}),
      false,
    );
    assert.equal(
      onResponseClose(undefined, res, () => {}),
      false,
    );
    assert.equal(
      onResponseClose({ type: 'http', span: {} }, res, () => {}),
      false,
    );
    assert.equal(
      onResponseClose(metadata, undefined, () => {}),
      false,
    );
    responseClosed(metadata);
    assert.equal(
      onResponseClose(metadata, res, () => {}),
      false,
    );
  });

  it('lets go of the response once it closed: nothing in the metadata reaches it', () => {
    const res = response();
    const metadata = closingMetadata('http', {}, res);
    onResponseClose(metadata, res, () => {});
    responseClosed(metadata);
    const reached = Object.getOwnPropertySymbols(metadata).map((key) => (metadata as unknown as Record<symbol, unknown>)[key]);
    assert.ok(!reached.includes(res));
    assert.deepEqual(Object.keys(metadata), ['type', 'span']);
  });
});
