import { defineConfig } from 'vite';

// React's JSX runtime through Vite's own transform: no React plugin (its fast refresh is a
// development nicety this example does without).
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic' } },
});
