/**
 * Tailcall (Rust), the fastest REST-to-GraphQL peer. Its binary comes in the
 * `@tailcallhq/core-linux-x64-gnu` optional dependency (Linux x64 only), pinned to 1.0.0: later
 * builds need glibc ≥ 2.38, Debian 12 has 2.36. In its 1.x language `@upstream` takes
 * `allowedHeaders` (no `baseURL`), `@http` a full `url` and `query` entries (`skipEmpty`, or an
 * absent argument goes out as an empty `status=`).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The binary inside its npm package (no install script: the file is in the tarball). */
export function tailcallBinary(): string {
  try {
    const manifest = createRequire(import.meta.url).resolve('@tailcallhq/core-linux-x64-gnu/package.json');
    return join(dirname(manifest), 'bin', 'tailcall');
  } catch {
    throw new Error(
      '@tailcallhq/core-linux-x64-gnu is not installed (npm ci installs it, on Linux x64 with glibc only)',
    );
  }
}

/** Logs off but errors: at INFO it writes a line per request, which no other target pays for. */
export const TAILCALL_LOG_ENV = { TAILCALL_LOG_LEVEL: 'error', TC_LOG_LEVEL: 'error' } as const;

/**
 * The contract's `GET /pets?limit=&status=` as `pets(limit, status)` on `127.0.0.1:port`, the
 * caller's Authorization forwarded; `status` a String (the workloads select it, never compare it).
 */
export function tailcallConfig(upstreamUrl: URL, port: number): string {
  const pets = `${upstreamUrl.href.replace(/\/+$/, '')}/pets`;
  return `schema
  @server(hostname: "127.0.0.1", port: ${port})
  @upstream(allowedHeaders: ["authorization"]) {
  query: Query
}

type Query {
  pets(limit: Int, status: String): [Pet!]!
    @http(
      url: ${JSON.stringify(pets)}
      query: [
        { key: "limit", value: "{{.args.limit}}", skipEmpty: true }
        { key: "status", value: "{{.args.status}}", skipEmpty: true }
      ]
    )
}

type Pet {
  id: ID!
  name: String!
  categoryId: ID!
  status: String
}
`;
}
