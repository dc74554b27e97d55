import { describe, expect, it } from 'vitest';
import { renderGrid } from '../../harness/reporters/grid.js';

describe('renderGrid', () => {
  it('boxes single-line cells, each column as wide as its widest cell, a rule between rows', () => {
    expect(
      renderGrid(
        ['id', 'verdict'],
        [
          ['a_long_id', 'valid'],
          ['b', 'not_red\nsecond line'],
        ],
      ),
    ).toBe(
      [
        '┌───────────┬─────────────────────┐',
        '│ id        │ verdict             │',
        '├───────────┼─────────────────────┤',
        '│ a_long_id │ valid               │',
        '├───────────┼─────────────────────┤',
        '│ b         │ not_red second line │',
        '└───────────┴─────────────────────┘',
      ].join('\n'),
    );
  });

  it('gives a row with missing cells empty ones, and a table with no rows its head alone', () => {
    expect(renderGrid(['a', 'b'], [['x']]).split('\n')[3]).toBe('│ x │   │');
    expect(renderGrid(['a'], [])).toBe(['┌───┐', '│ a │', '└───┘'].join('\n'));
  });
});
