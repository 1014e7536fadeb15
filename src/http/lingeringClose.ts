/**
 * Closing a connection whose request body was refused before it was read (413) without losing
 * the answer. Closing a socket that still has unread bytes makes the kernel send a reset, and a
 * client still sending its body then sees a broken pipe instead of the 413 it was sent. So the
 * answer says `Connection: close`; after it is written the server half-closes (FIN), reads and
 * drops what the client still sends, up to LINGER_MAX_BYTES or LINGER_MAX_MS, and only then
 * closes. Ordinary clients finish sending and read the 413.
 */
import type { Socket } from 'node:net';
import type { Context } from 'koa';

export const LINGER_MAX_BYTES = 32 * 1024 * 1024;
export const LINGER_MAX_MS = 5_000;

/** Call while answering a refused request whose body may not have been read (yet). */
export function closeAfterResponse(ctx: Context): void {
  const req = ctx.req;
  if (req.complete) return; // nothing left to read: an ordinary close is clean
  ctx.set('Connection', 'close');
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (typeof socket.destroySoon !== 'function' || (socket as { lingering?: boolean }).lingering) return;
  (socket as { lingering?: boolean }).lingering = true;
  // Node's server calls destroySoon() once a `Connection: close` response is written; linger instead.
  socket.destroySoon = () => {
    let drained = 0;
    const close = () => {
      clearTimeout(timer);
      socket.destroy();
    };
    const timer = setTimeout(close, LINGER_MAX_MS);
    timer.unref();
    socket.end(); // our FIN follows the answer; the client may keep sending
    socket.on('data', (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > LINGER_MAX_BYTES) close();
    });
    socket.once('end', close); // the client finished and closed its side
    req.on('end', close); // the whole body arrived: nothing more will come
    socket.resume();
    req.resume();
  };
}
