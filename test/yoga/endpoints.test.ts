// @tier unit

import { describe, expect, it } from 'vitest';
import { isPath } from '../../src/yoga/endpoints.ts';

describe('isPath', () => {
  const request = (url: string) => new Request(url);

  it('matches the exact path, with or without a query string', () => {
    expect(isPath(request('http://g/readiness'), '/readiness')).toBe(true);
    expect(isPath(request('http://g/readiness?probe=lb'), '/readiness')).toBe(true);
  });

  it('does not match the path in a query string, a longer path, or another prefix', () => {
    expect(isPath(request('http://g/graphql?next=/readiness'), '/readiness')).toBe(false);
    expect(isPath(request('http://g/readiness/extra'), '/readiness')).toBe(false);
    expect(isPath(request('http://g/x/readiness'), '/readiness')).toBe(false);
    expect(isPath(request('http://g/graphql'), '/readiness')).toBe(false);
  });
});
