/**
 * The one HTTP request the Hetzner client makes, a GET whose whole body is read as text, on node:http(s).
 *
 * Why not `fetch`: Node's fetch is its own bundled copy of undici, evaluated on the first call. In bare
 * Node that first call adds about 8 MB of anonymous memory and 9 MB of the node binary's pages to the
 * RSS; cloud-node, which calls the API at start-up, idled 5.7 MB lower without it (the footprint bench),
 * for a client that only ever GETs JSON. node:https's global agent keeps connections alive, as fetch
 * does, and goes through HTTP(S)_PROXY when NODE_USE_ENV_PROXY=1, as fetch does.
 */
import http from 'node:http';
import https from 'node:https';
import { gunzip } from 'node:zlib';

export interface HttpGetInit {
  headers: Readonly<Record<string, string>>;
  /** Aborting it ends the request, also while the body is being read: it rejects with Node's AbortError. */
  signal?: AbortSignal;
}

/** An answer, complete: the body was read to its end. */
export interface HttpGetResponse {
  status: number;
  /** Case-insensitive, like fetch's `Headers.get`: `null` when absent, repeated values joined by `, `. */
  headers: { get(name: string): string | null };
  text: string;
}

/** A GET of `url` that resolves once the whole body is in, and rejects on any network error. */
export type HttpGet = (url: string, init: HttpGetInit) => Promise<HttpGetResponse>;

function headerGetter(headers: http.IncomingHttpHeaders): HttpGetResponse['headers'] {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(', ') : value;
    },
  };
}

/** `Content-Encoding: gzip`, whatever its case. */
function isGzip(response: http.IncomingMessage): boolean {
  return response.headers['content-encoding']?.trim().toLowerCase() === 'gzip';
}

/**
 * The default {@link HttpGet}. It asks for gzip, as fetch does, and inflates what comes gzip'ed (a list of
 * servers is JSON that compresses tenfold) once the whole body is in: the response is always read to its
 * end, so its connection goes back to the agent's pool, and an empty body (a 204, a 304) is empty text.
 */
export const httpGet: HttpGet = (url, init) =>
  new Promise((resolve, reject) => {
    const request = (url.startsWith('https:') ? https : http).get(
      url,
      { headers: { 'Accept-Encoding': 'gzip', ...init.headers }, signal: init.signal },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const answer = (body: Buffer): void => {
            resolve({
              status: response.statusCode ?? 0,
              headers: headerGetter(response.headers),
              text: body.toString('utf8'),
            });
          };
          const raw = Buffer.concat(chunks);
          if (raw.length === 0 || !isGzip(response)) answer(raw);
          else
            gunzip(raw, (error, body) => {
              if (error) reject(error);
              else answer(body);
            });
        });
      },
    );
    request.on('error', reject);
  });
