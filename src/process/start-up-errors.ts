import type { Server } from 'node:net';

// Start-up failures the environment causes (a port taken, a host that is not ours, a database
// file that cannot be opened) end like a bad configuration value: one line that names the
// variable and what to do, and exit code 1. A Node stack trace tells an operator neither.

/** A start-up failure with a one-line message for people; main.ts prints it and exits 1. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** `server.listen(port, host)`, rejecting with a StartupError that says what to change. */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => reject(listenError(error, port, host));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

/** The one line for an error `listen` raised on PORT/HOST. */
export function listenError(error: NodeJS.ErrnoException, port: number, host: string): StartupError {
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(
        `port ${port} on ${host} is already in use: stop what is listening there, or set PORT to another port (PORT=0 picks a free one)`,
      );
    case 'EACCES':
      return new StartupError(
        port < 1024
          ? `not allowed to listen on port ${port}: ports below 1024 need privileges, so set PORT to 1024 or above (e.g. PORT=4000)`
          : `not allowed to listen on port ${port} on ${host}: set PORT to another port (PORT=0 picks a free one)`,
      );
    case 'EADDRNOTAVAIL':
    case 'EINVAL':
      return new StartupError(
        `HOST ${host} is not an address of this machine: use 0.0.0.0 (every interface) or 127.0.0.1 (this machine only)`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(
        `HOST "${host}" does not resolve to an address: use an IP address such as 0.0.0.0 or 127.0.0.1`,
      );
    case 'EAFNOSUPPORT':
      return new StartupError(`HOST ${host} is an IPv6 address, and IPv6 is not available here: use 0.0.0.0`);
    default:
      return new StartupError(`cannot listen on ${host}:${port} (${error.code ?? error.message})`);
  }
}

/** What creating the database's directory failed on; SQLite itself says only "unable to open database file". */
const FILE_ERRORS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EEXIST: 'a file stands where its directory should be',
  ENOTDIR: 'a file stands where its directory should be',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  ENOENT: 'its directory cannot be made there',
};

/** The one line for the embedded reference service's database file failing to open. */
export function petstoreDbError(path: string, error: unknown): StartupError {
  const { code, message } = error as NodeJS.ErrnoException;
  const reason = (code && FILE_ERRORS[code]) ?? message;
  return new StartupError(
    `PETSTORE_DB "${path}" cannot be opened (${reason}): point it at a file in a writable directory, or use PETSTORE_DB=:memory:`,
  );
}
