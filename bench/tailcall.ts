/**
 * Tailcall (tailcallhq/tailcall, Rust), the fastest REST-to-GraphQL peer, as a bench target: its
 * binary comes in the `@tailcallhq/core-linux-x64-gnu` optional dependency (Linux x64 only: elsewhere npm skips it and
 * this target cannot run), pinned to 1.0.0 (later builds need glibc ≥ 2.38; Debian 12 has 2.36). Its 1.x configuration language: `@upstream` takes
 * `allowedHeaders` (no `baseURL`), `@http` a full `url` and `query` entries (`skipEmpty`, or an absent
 * argument goes out as an empty `status=`).
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The tailcall binary inside its npm package (which has no install script: the file is in the tarball). */
export function tailcallBinary(): string {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve('@tailcallhq/core-linux-x64-gnu/package.json');
  } catch {
    throw new Error(
      '@tailcallhq/core-linux-x64-gnu is not installed (npm ci installs it, on Linux x64 with glibc only)',
    );
  }
  return join(dirname(manifest), 'bin', 'tailcall');
}

/**
 * The environment that turns its logs off but errors: at INFO it writes a line per request, which
 * none of the other targets pays for (the gateway's one line per operation is part of the gateway).
 */
export const TAILCALL_LOG_ENV = { TAILCALL_LOG_LEVEL: 'error', TC_LOG_LEVEL: 'error' } as const;

/**
 * The contract's `GET /pets?limit=&status=` as `pets(limit, status)`, on `127.0.0.1:port`, over
 * `upstreamUrl` (ending in /v1), the caller's Authorization forwarded. `status` is a String here (the
 * contract's lower-case value): the bench's workloads select it but do not compare it. Tailcall's
 * defaults otherwise.
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
