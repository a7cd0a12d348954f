import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sentence } from './claims.ts';

// Sentences that name what a file of the repository says (#44 item 7): held against the file, so the
// two cannot drift apart again.

const ROOT = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, ROOT), 'utf8');

describe('docs/mobile.md: “Write the app’s operations with codegen’s client preset…”', () => {
  it('names the persistedDocuments option as codegen.ts sets it', () => {
    const claim = sentence('docs/mobile.md', "Write the app's operations with codegen's client preset");
    const option = /persistedDocuments: \{[^}]*\}/.exec(read('codegen.ts'))?.[0];
    expect(option).toBeDefined();
    expect(claim).toContain(`\`${option}\``);
    expect(read('docs/mobile.md')).not.toContain('persistedDocuments: true');
  });
});

describe('examples/web/README.md: “`VITE_GATEWAY_URL` says where the gateway is…”', () => {
  const claim = sentence('examples/web/README.md', '`VITE_GATEWAY_URL` says where the gateway is');
  const app = read('examples/web/src/app.tsx');

  it('says it holds for npm run dev as for the build (Vite reads import.meta.env in both)', () => {
    expect(app).toMatch(/import\.meta\.env\.VITE_GATEWAY_URL/);
    expect(claim).toContain('`npm run dev`');
    expect(claim).toContain('`vite build`');
    expect(claim).not.toMatch(/at build time/);
  });

  it('gives the default the app has, and how to point it at another PORT', () => {
    const fallback = /VITE_GATEWAY_URL \?\? '([^']+)'/.exec(app)?.[1];
    expect(claim).toContain(`\`${fallback}\``);
    expect(claim).toMatch(/`PORT=\d+ npm start`/);
    const port = /`PORT=(\d+) npm start`/.exec(claim)?.[1];
    expect(claim).toContain(`VITE_GATEWAY_URL=http://localhost:${port}/graphql`);
  });
});
