import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderEdges, LAYERS, violations } from './layers.js';

const SRC = path.resolve(import.meta.dirname, '../../src');

describe('src/ folder layering', () => {
  it('every import goes to a lower layer (so the folder graph has no cycle)', () => {
    expect(violations(folderEdges(SRC))).toEqual([]);
  });

  it('the checker sees upward, sideways and undeclared edges', () => {
    const bad = violations([
      { file: 'planner/x.ts', from: 'planner', to: 'cgroup' },
      { file: 'topology/x.ts', from: 'topology', to: 'policy' },
      { file: 'odd/x.ts', from: 'odd', to: 'model' },
      { file: 'cli/x.ts', from: 'cli', to: 'ops' },
    ]);
    expect(bad).toEqual([
      'planner/x.ts: planner → cgroup',
      'topology/x.ts: topology → policy',
      'odd/x.ts: odd → model',
    ]);
  });

  it('finds real edges, dynamic imports included', () => {
    const edges = folderEdges(SRC);
    expect(edges.some((e) => e.from === 'cli' && e.to === 'ops')).toBe(true);
    expect(Object.keys(LAYERS)).toContain('model');
  });
});
