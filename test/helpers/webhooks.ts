/** Helpers for webhook tests: a subscription made through the API, and a real local receiver. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { EVENT_TYPES } from '../../db/queries/events.ts';
import { verifyWebhook, type WebhookEvent } from '../../workers/webhook-signature.ts';
import { call, type TestServer } from './http.ts';

const ALL_TYPES = [...EVENT_TYPES];

/** Subscribes through the API; returns the subscription id and its secret. */
export async function subscribe(
  server: TestServer,
  apiKey: string,
  endpointUrl: string,
  eventTypes: string[] = ALL_TYPES,
): Promise<{ id: string; secret: string }> {
  const res = await call(server, 'POST', '/api/v1/partner/webhooks', {
    key: apiKey,
    body: { endpoint_url: endpointUrl, event_types: eventTypes },
  });
  if (res.status !== 201) throw new Error(res.text);
  return { id: res.body.data.id as string, secret: res.body.secret_key as string };
}

/** One request a receiver got, with its verification. */
export interface Received {
  headers: IncomingMessage['headers'];
  rawBody: string;
  event: WebhookEvent | undefined;
  rejection: string | undefined;
  at: number;
}

/** A local HTTP receiver that verifies every delivery with the partner-side function. */
export interface Receiver {
  url: string;
  received: Received[];
  /** Decides each answer; default 200. Return undefined to never answer. */
  respond: (request: Received) => number | undefined;
  close(): Promise<void>;
}

export async function startReceiver(secret: () => string): Promise<Receiver> {
  const pending = new Set<ServerResponse>();
  const receiver: Receiver = {
    url: '',
    received: [],
    respond: () => 200,
    close: async () => {
      for (const res of pending) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const verdict = verifyWebhook({ rawBody, headers: req.headers, secret: secret() });
      const entry: Received = {
        headers: req.headers,
        rawBody,
        event: verdict.ok ? verdict.event : undefined,
        rejection: verdict.ok ? undefined : verdict.reason,
        at: Date.now(),
      };
      receiver.received.push(entry);
      const status = receiver.respond(entry);
      if (status === undefined) {
        pending.add(res);
        return;
      }
      res.writeHead(status).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}
