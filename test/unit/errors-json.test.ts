import { describe, expect, it } from 'vitest';
import { jsonProblem } from '../../harness/errors.js';

const problem = (text: string) => {
  try {
    JSON.parse(text);
  } catch (e) {
    return jsonProblem(text, e);
  }
  throw new Error('parsed');
};

describe('jsonProblem: where JSON broke, as line:column', () => {
  it('turns the character offset into a line and a column', () => {
    expect(problem('{\n  "a": 1,\n  b: 2\n}')).toBe('Expected double-quoted property name at line 3, column 3');
    expect(problem('{"a": 1,}')).toBe('Expected double-quoted property name at line 1, column 9');
  });

  it('places a text that ends too early at its end', () => {
    expect(problem('{\n  "a": [1, 2')).toBe("Expected ',' or ']' after array element at line 2, column 13");
    expect(problem('{\n')).toBe("Expected property name or '}' at line 2, column 1");
    expect(problem('\n')).toBe('unexpected end of the text at line 2, column 1');
  });

  it('keeps a message it cannot place as it is', () => {
    expect(problem('{"a": }')).toMatch(/^Unexpected token '}'/);
  });
});
