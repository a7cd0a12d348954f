import { integer } from './env-values.ts';

/** What one WebSocket (graphql-ws) may hold or send, whatever its client does. */
export interface WebSocketSettings {
  /**
   * Bytes written to the socket that its client has not read yet (`ws`'s `bufferedAmount`): past
   * it the client is a slow reader and the socket is closed (1008). @default 1048576
   */
  readonly maxBufferedBytes: number;
  /** Messages a socket may send per second, pings and `connection_init` included; past it, 1008. @default 50 */
  readonly maxMessagesPerSecond: number;
  /** Operations running at once on one socket; another is refused with an `error` message. @default 32 */
  readonly maxOperations: number;
}

/** WS_MAX_BUFFERED_BYTES, WS_MAX_MESSAGES_PER_SECOND and WS_MAX_OPERATIONS. */
export function webSocketSettings(env: Record<string, string | undefined>): WebSocketSettings {
  return Object.freeze({
    // At least one frame of the body cap's size must fit, or an ordinary answer would close the socket.
    maxBufferedBytes: integer(env, 'WS_MAX_BUFFERED_BYTES', 1024 * 1024, 65_536, 1024 * 1024 * 1024),
    maxMessagesPerSecond: integer(env, 'WS_MAX_MESSAGES_PER_SECOND', 50, 1, 100_000),
    maxOperations: integer(env, 'WS_MAX_OPERATIONS', 32, 1, 10_000),
  });
}
