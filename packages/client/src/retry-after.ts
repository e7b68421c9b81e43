/**
 * The server's request to send a request again later (client-go's `checkWait`): the transport sends it
 * again after `Retry-After`, within its deadline, at most {@link MAX_RETRIES} times.
 */
import type http from 'node:http';
import { header } from './response.ts';

/**
 * How often one request is sent again when the server asks for it with `Retry-After` (client-go's
 * `maxRetries` default); the last answer is then returned as it is.
 */
export const MAX_RETRIES = 10;

/**
 * client-go's `checkWait`: a 429 (API Priority and Fairness rejected the request before executing it)
 * or a 5xx that carries `Retry-After` (whole seconds) asks the client to send the same request again
 * after that delay. Anything else is the answer.
 */
export function serverRetryAfterMs(status: number, response: http.IncomingMessage): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  // Node trims the whitespace around a header's value.
  const value = header(response, 'retry-after');
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value) * 1000;
}
