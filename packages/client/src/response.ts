/**
 * Reading a response: its body to the end (or to a limit), and the {@link KubeApiError} an error
 * status stands for.
 */
import type http from 'node:http';
import { KubeApiError, type KubeRequestLine } from './api-error.ts';
import { decodeStatus, isProtobufMediaType, unwrapObject, type ProtobufObject } from './protobuf.ts';

/** Largest error body read; a `Status` is a few KiB, anything bigger is not one and is cut off. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The error an error status stands for: its body's `Status` (JSON, or protobuf when asked for). */
export function errorOf(
  status: number,
  body: Buffer,
  response: http.IncomingMessage,
  line: KubeRequestLine,
): KubeApiError {
  const retryAfterHeader = header(response, 'retry-after');
  if (isProtobufMediaType(header(response, 'content-type'))) {
    let object: ProtobufObject | undefined;
    try {
      object = unwrapObject(body);
    } catch {
      // Not an object after all: said as an undecodable body below.
    }
    if (object?.kind === 'Status') {
      return KubeApiError.fromStatus(decodeStatus(object), {
        httpStatus: status,
        retryAfterHeader,
        request: line,
      });
    }
    return KubeApiError.fromResponse(
      status,
      `(${body.length} bytes of protobuf, not a Status)`,
      retryAfterHeader,
      line,
    );
  }
  return KubeApiError.fromResponse(status, body.toString('utf8'), retryAfterHeader, line);
}

/**
 * Reads a response to its end, or its first `maxBytes` (the rest is dropped with the connection). With
 * listeners rather than `for await`, whose async iterator costs promises on every request.
 */
export function readBody(response: http.IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error: Error | undefined): void => {
      response.off('data', onData).off('end', onEnd).off('error', onError);
      if (error === undefined) resolve(Buffer.concat(chunks, size).subarray(0, maxBytes));
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) settle(undefined);
    };
    const onEnd = (): void => {
      settle(undefined);
    };
    // A body cut off before its last byte (by the server, the deadline or an abort) ends in an error.
    const onError = (error: Error): void => {
      settle(error);
    };
    response.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

export function header(response: http.IncomingMessage, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
