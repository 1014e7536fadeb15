/**
 * Closing a connection whose request body was refused before it was read (413) without losing
 * the answer. Closing a socket that still has unread bytes makes the kernel send a reset, and a
 * client still sending its body then sees a broken pipe instead of the 413 it was sent. So the
 * answer says `Connection: close`; after it is written the server half-closes (FIN), reads and
 * drops what the client still sends, up to LINGER_MAX_BYTES or LINGER_MAX_MS, and only then
 * closes. Ordinary clients finish sending and read the 413.
 *
 * The rest of the body is read through the request, never through the socket. Node's HTTP server
 * feeds the socket's bytes straight to its parser (the parser "consumes" the socket's handle), and
 * the request's backpressure stops and starts that handle: a refused body that arrived while the
 * request waited (an authentication query on PostgreSQL, say) filled the request's buffer and
 * stopped the handle. A 'data' listener on the socket takes the handle back from the parser and
 * with it the server's pause/resume bridge, and net.Socket's own resume() cannot start the handle
 * again (its stream still counts the read it started before the parser took over as pending): the
 * drain then read nothing and the client's send ended in a broken pipe when LINGER_MAX_MS cut it.
 * Resuming the request instead makes the parser ask the server for more, which starts the handle.
 */
import type { Socket } from 'node:net';
import type { Context } from 'koa';

export const LINGER_MAX_BYTES = 32 * 1024 * 1024;
export const LINGER_MAX_MS = 5_000;

type LingeringSocket = Socket & { destroySoon?: () => void; lingering?: boolean };

/** Call while answering a refused request whose body may not have been read (yet). */
export function closeAfterResponse(ctx: Context): void {
  const req = ctx.req;
  if (req.complete) return; // nothing left to read: an ordinary close is clean
  ctx.set('Connection', 'close');
  const socket = req.socket as LingeringSocket;
  if (typeof socket.destroySoon !== 'function' || socket.lingering) return;
  socket.lingering = true;

  let drained = 0;
  let lingering = false;
  let timer: NodeJS.Timeout | undefined;
  const close = () => {
    clearTimeout(timer);
    socket.destroy();
  };
  // Drop the body from now on. Reading it while the answer is written also keeps Node from dumping
  // the request when the response finishes, which would hide the bytes from this count.
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (lingering && drained > LINGER_MAX_BYTES) close();
  });
  req.resume(); // a body parser that gave up may have paused it
  const destroySoon = socket.destroySoon.bind(socket);
  // Node's server calls destroySoon() once a `Connection: close` response is written; linger instead.
  socket.destroySoon = () => {
    if (req.complete) return destroySoon(); // the body arrived meanwhile: close as usual
    lingering = true;
    timer = setTimeout(close, LINGER_MAX_MS);
    timer.unref();
    socket.end(); // our FIN follows the answer; the client may keep sending
    req.once('end', close); // the whole body arrived: nothing more will come
    socket.once('end', close); // the client closed its side first
    socket.once('close', () => clearTimeout(timer));
    if (drained > LINGER_MAX_BYTES) close();
  };
}
