/**
 * A watch's response body as its documents: one JSON document per line, or (protobuf) one
 * length-prefixed frame per event, split as the bytes arrive, whatever the chunking.
 */
import type http from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { KubeApiError } from './api-error.ts';
import type { Exchange } from './exchange.ts';
import { LineDecoder } from './line-decoder.ts';
import { FrameDecoder, isProtobufMediaType } from './protobuf.ts';
import { header } from './response.ts';

/**
 * The documents of a watch's response as they arrive: each line's JSON, with `text` the text itself, or with `protobuf` each
 * frame's bytes. Throws a {@link KubeApiError} for a body that is not what was asked for, a piece that
 * is no document, or a stream cut in the middle of one; every chunk tells `exchange` the connection
 * lives.
 */
export async function* watchDocuments(
  response: http.IncomingMessage,
  format: 'json' | 'protobuf' | 'text',
  exchange: Exchange,
): AsyncGenerator<unknown, void, undefined> {
  const contentType = header(response, 'content-type');
  if (format === 'protobuf' && !isProtobufMediaType(contentType)) {
    throw KubeApiError.undecodable(
      response.statusCode ?? 0,
      new Error(`asked for protobuf, the server sent ${contentType ?? 'no Content-Type'}`),
      exchange.line,
    );
  }
  const stream = { json: jsonLines, protobuf: protobufFrames, text: textPieces }[format]();
  for await (const chunk of response as AsyncIterable<Buffer>) {
    exchange.heardFrom();
    for (const piece of stream.split(chunk)) {
      let document: unknown;
      try {
        document = stream.decode(piece);
      } catch (error) {
        throw KubeApiError.undecodable(response.statusCode ?? 0, error, exchange.line);
      }
      yield document;
    }
  }
  const unfinished = stream.unfinished();
  if (unfinished !== undefined) {
    throw KubeApiError.noResponse(
      new Error(`stream ended in the middle of a ${unfinished}`),
      exchange.line,
      false,
    );
  }
}

/** How a watch's bytes become its documents: split as they arrive, then each decoded. */
interface WatchStream {
  split(chunk: Buffer): Iterable<Buffer | string>;
  /** Throws for a piece that is no document. */
  decode(piece: Buffer | string): unknown;
  /** What a piece is called when one was left unfinished at the end, else undefined. */
  unfinished(): string | undefined;
}

/** One JSON document per line; blank lines are none. */
function jsonLines(): WatchStream {
  const text = new StringDecoder('utf8');
  const lines = new LineDecoder();
  return {
    split: (chunk) => lines.push(text.write(chunk)).filter((line) => line.trim() !== ''),
    decode: (line) => JSON.parse(line as string) as unknown,
    unfinished: () => ((lines.end() + text.end()).trim() === '' ? undefined : 'line'),
  };
}

/** Text as it arrives: a character split between two chunks waits for the rest of it. */
function textPieces(): WatchStream {
  const text = new StringDecoder('utf8');
  return {
    split: (chunk) => {
      const piece = text.write(chunk);
      return piece === '' ? [] : [piece];
    },
    decode: (piece) => piece,
    unfinished: () => (text.end() === '' ? undefined : 'character'),
  };
}

/** Length-prefixed frames, each a `WatchEvent` message the caller decodes (see `protobuf.ts`). */
function protobufFrames(): WatchStream {
  const frames = new FrameDecoder();
  return {
    split: (chunk) => frames.push(chunk),
    decode: (frame) => frame,
    unfinished: () => (frames.pendingBytes() === 0 ? undefined : 'frame'),
  };
}
