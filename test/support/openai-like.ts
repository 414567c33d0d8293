import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OpenAiLike {
  /** http://127.0.0.1:<port>/v1, the client's `baseURL`. */
  readonly baseURL: string;
  close(): Promise<void>;
}

/** The model the server refuses, as the API refuses an unknown one: 400, `model_not_found`. */
export const UNKNOWN_MODEL = 'no-such-model';

const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 };

const chatCompletion = (model: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_700_000_000,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage,
});

const response = (model: string, status: 'in_progress' | 'completed') => ({
  id: 'resp_1',
  object: 'response',
  created_at: 1_700_000_000,
  status,
  model,
  output:
    status === 'completed'
      ? [{ id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'hello there', annotations: [] }] }]
      : [],
  usage: status === 'completed' ? { input_tokens: 5, output_tokens: 2, total_tokens: 7 } : null,
});

/** The events of a streamed response (`responses.create({ stream: true })`), as the API sends them. */
function responseEvents(model: string): { type: string; [key: string]: unknown }[] {
  const item = response(model, 'completed').output[0];
  return [
    { type: 'response.created', response: response(model, 'in_progress') },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'hello ' },
    { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'there' },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: response(model, 'completed') },
  ].map((event, sequence_number) => ({ ...event, sequence_number }));
}

let requests = 0;

function answer(request: IncomingMessage, res: ServerResponse, body: { model?: string; stream?: boolean }): void {
  const model = body.model ?? '';
  const json = (status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${++requests}` });
    res.end(JSON.stringify(value));
  };
  if (model === UNKNOWN_MODEL) {
    json(400, { error: { message: `The model \`${model}\` does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
    return;
  }
  switch (request.url) {
    case '/v1/chat/completions':
      json(200, chatCompletion(model));
      return;
    case '/v1/embeddings':
      json(200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5, 1] }], model, usage: { prompt_tokens: 3, total_tokens: 3 } });
      return;
    case '/v1/responses':
      if (!body.stream) {
        json(200, response(model, 'completed'));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': `req_${++requests}` });
      for (const event of responseEvents(model)) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      res.end();
      return;
    default:
      json(404, { error: { message: `no ${request.url}`, type: 'invalid_request_error' } });
  }
}

/**
 * A server on 127.0.0.1 that answers as the OpenAI API does, for the calls the transparency tests
 * make: a chat completion, embeddings, a response (whole, or streamed as server-sent events), and
 * 400 for the model {@link UNKNOWN_MODEL}.
 */
export async function startOpenAiLike(): Promise<OpenAiLike> {
  const server = createServer((request, res) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => answer(request, res, chunks.length === 0 ? {} : (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model?: string })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
