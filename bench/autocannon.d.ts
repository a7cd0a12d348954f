// The part of autocannon 9's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  interface AutocannonRequest {
    method?: string;
    headers?: Record<string, string> | undefined;
    body?: string | Buffer | undefined;
    setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
  }

  function autocannon(
    options: AutocannonRequest & {
      url: string;
      connections?: number;
      duration?: number;
      /** Requests per second over all connections; unset = as fast as the target answers. */
      overallRate?: number;
      /** Requests per second each connection sends at most. */
      connectionRate?: number;
      requests?: AutocannonRequest[];
      /** A response whose body fails this counts as a mismatch, not as a 2xx. */
      verifyBody?: (body: string) => boolean;
    },
  ): Promise<{
    duration: number;
    errors: number;
    mismatches: number;
    non2xx: number;
    latency: { p50: number; p99: number };
    requests: { total: number };
  }>;
  export default autocannon;
}
