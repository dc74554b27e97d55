import { createRequire } from 'node:module';
import type { X2jOptions, XMLParser } from 'fast-xml-parser';

/**
 * An XML parser made on first use: most commands (validate, a run of runners that report JSON)
 * never read XML, and loading the parser's ESM files costs them more than a whole small fixture.
 * The package's CommonJS build is one file.
 */
export function lazyXmlParser(options: X2jOptions): { parse(xml: string): unknown } {
  let parser: XMLParser | undefined;
  return {
    parse(xml) {
      if (!parser) {
        const { XMLParser: Parser } = createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
        parser = new Parser(options);
      }
      return parser.parse(xml) as unknown;
    },
  };
}
